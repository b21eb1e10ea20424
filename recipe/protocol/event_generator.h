// EventGenerator: ParsedEvents → one API's streaming events (SSE-ready JSON) and, folded from the
// same events, its final non-streaming response. One implementation per API folder; this file
// holds the interface and what they share. Parsing model output is not its business.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/protocol/api_error.h"
#include "recipe/stream/parsed_event.h"
#include "recipe/stream/parser_options.h"

namespace di::recipe {

// One server-sent event: `event: <name>` (omitted when empty, as in Chat Completions) and
// `data: <data>`. data is JSON, except Chat Completions' closing "[DONE]".
struct SseEvent {
  std::string name;
  std::string data;
};

// Formats an event as SSE text: "event: …\ndata: …\n\n".
std::string to_sse(const SseEvent& e);

class EventGenerator {
 public:
  virtual ~EventGenerator() = default;
  // The stream's opening events; `usage` holds the prompt counts known so far.
  virtual void start(const Usage& usage, std::vector<SseEvent>* out) = 0;
  virtual void on_event(const ParsedEvent& e, std::vector<SseEvent>* out) = 0;
  // The log-probabilities of the tokens pushed next (OpenAI token entries). Only Chat
  // Completions has a place for them; the others ignore them.
  virtual void on_logprobs(nlohmann::json /*entries*/) {}
  // The closing events; nothing follows.
  virtual void finish(const FinishInfo& info, std::vector<SseEvent>* out) = 0;
  // A failure in mid-stream: the API's error event(s); nothing follows.
  virtual void fail(const ApiError& error, std::vector<SseEvent>* out) = 0;
  // The non-streaming response body, valid after finish().
  virtual nlohmann::json response() const = 0;

 protected:
  explicit EventGenerator(ParserOptions options) : options_(std::move(options)) {}

  // Appends one event. Model output may hold any bytes: invalid UTF-8 in the data is replaced,
  // never thrown on.
  static void push_event(std::string name, const nlohmann::json& data, std::vector<SseEvent>* out);
  // Appends an event named by its own "type" field (Responses and Messages events).
  static void push_typed_event(const char* type, nlohmann::json data, std::vector<SseEvent>* out);

  ParserOptions options_;
};

// The generator for options.protocol. options.request_id and options.created must be set.
std::unique_ptr<EventGenerator> make_event_generator(const ParserOptions& options);

}  // namespace di::recipe
