// OutputParser: one request's model output → its API's events and final response. Joins the
// StreamParser (what the output means) with the API's EventGenerator (how it is written) and
// keeps the usage counts. One per stream, single-threaded; knows nothing of the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/protocol/event_generator.h"
#include "recipe/stream/stream_parser.h"

namespace di::recipe {

// How the engine says a chunk ended the output.
enum class OutputFinish { kNone, kStop, kLength, kStopSequence, kContentFilter, kCancelled, kError };

// One piece of engine output. Counts < 0 are unknown (the last known value is kept).
struct OutputChunk {
  std::string_view text;
  std::span<const int32_t> token_ids;
  OutputFinish finish = OutputFinish::kNone;
  std::string_view error_message;  // kError: what went wrong
  int64_t prompt_tokens = -1;         // including cached ones
  int64_t cached_prompt_tokens = -1;
  int64_t completion_tokens = -1;     // cumulative; unknown → the number of ids pushed
  // The engine's log-probabilities of token_ids (empty when not requested) and, per token,
  // num_top_logprobs alternatives (ids and log-probabilities, most likely first).
  std::span<const float> logprobs;
  uint32_t num_top_logprobs = 0;
  std::span<const int32_t> top_logprob_ids;
  std::span<const float> top_logprobs;
};

class OutputParser {
 public:
  // Fills an empty request_id with a random one and created = 0 with the clock.
  explicit OutputParser(ParserOptions options, TokenDecoder decoder = {});

  // Feeds a chunk; appends the events it completes. A chunk with a finish reason ends the
  // output (as finish() would); pushes after the end are ignored.
  void push(const OutputChunk& chunk, std::vector<SseEvent>* out);
  // End of output without a finish reason from the engine (finish reason "end of stream").
  void finish(std::vector<SseEvent>* out);
  // A failure in mid-stream: the API's error event; the stream is over.
  void fail(const Status& status, std::vector<SseEvent>* out);

  bool done() const { return done_; }
  bool failed() const { return failed_; }
  // The non-streaming response body (after the end), or the API's error body when it failed.
  nlohmann::json response() const;
  const ParserOptions& options() const { return options_; }

 private:
  void ensure_started(std::vector<SseEvent>* out);
  void forward(std::vector<SseEvent>* out);
  void end(EngineFinish engine, std::vector<SseEvent>* out);
  // The chunk's log-probabilities as OpenAI's token entries ({token, logprob, bytes,
  // top_logprobs}), handed to the generator.
  void forward_logprobs(const OutputChunk& chunk);

  ParserOptions options_;
  TokenDecoder decoder_;  // spells tokens for logprobs (may be empty: then "")
  StreamParser stream_;
  std::unique_ptr<EventGenerator> generator_;
  std::vector<ParsedEvent> parsed_;
  Usage usage_;
  bool completion_known_ = false;
  int64_t ids_seen_ = 0;
  // Text-only chunks: the growth of completion_tokens while the output was in reasoning.
  int64_t text_reasoning_tokens_ = 0;
  bool started_ = false, done_ = false, failed_ = false;
  nlohmann::json error_body_;
};

}  // namespace di::recipe
