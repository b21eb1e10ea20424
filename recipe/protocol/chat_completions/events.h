// Chat Completions output: `chat.completion.chunk` events and the `chat.completion` body. Usage
// goes in an extra final chunk with empty choices, only with stream_options.include_usage (as
// OpenAI does). Request parsing lives elsewhere in this folder.
#pragma once

#include <string>
#include <vector>

#include "recipe/protocol/event_generator.h"

namespace di::recipe {

class ChatCompletionsEvents : public EventGenerator {
 public:
  explicit ChatCompletionsEvents(ParserOptions options);
  void start(const Usage& usage, std::vector<SseEvent>* out) override;
  void on_event(const ParsedEvent& e, std::vector<SseEvent>* out) override;
  void finish(const FinishInfo& info, std::vector<SseEvent>* out) override;
  void fail(const ApiError& error, std::vector<SseEvent>* out) override;
  void on_logprobs(nlohmann::json entries) override;
  nlohmann::json response() const override;

 private:
  // What a chunk and the final body share: id, object, created, model, system_fingerprint and
  // the one choice.
  nlohmann::json envelope(const char* object, nlohmann::json choice) const;
  nlohmann::json chunk(nlohmann::json delta, nlohmann::json finish_reason = nullptr) const;
  // Sends a chunk; the log-probabilities that came since the last one ride on it.
  void emit(nlohmann::json data, std::vector<SseEvent>* out);

  std::string id_;
  std::string content_, reasoning_;
  bool has_content_ = false, has_reasoning_ = false;
  nlohmann::json tool_calls_ = nlohmann::json::array();
  std::string finish_reason_ = "stop";
  nlohmann::json usage_;
  nlohmann::json logprobs_ = nlohmann::json::array();  // every token's entry, for the body
  nlohmann::json pending_logprobs_ = nlohmann::json::array();  // not streamed yet
  bool has_logprobs_ = false;
};

// "stop", "length", "tool_calls", "content_filter".
const char* chat_finish_reason(FinishReason r);
nlohmann::json chat_usage(const Usage& u);

}  // namespace di::recipe
