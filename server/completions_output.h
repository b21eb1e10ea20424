// CompletionsOutput: the engine's chunks of one legacy completion request folded into OpenAI's
// `text_completion` objects — the stream chunks and the final body, choice by choice, with the
// legacy logprobs shape (tokens, token_logprobs, top_logprobs, text_offset). Knows no HTTP.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"

namespace di::server {

class CompletionsOutput {
 public:
  // `tokenizer` spells the tokens of logprobs (borrowed; may be NULL when logprobs < 0).
  // `echo_text` starts every choice's text (empty without echo).
  CompletionsOutput(std::string model, uint32_t n, int32_t logprobs, const di_tokenizer* tokenizer,
                    std::string echo_text);

  // Folds `c` into its choice and returns the stream chunk for it (choices: [that choice's
  // delta]); null when the chunk adds nothing a client sees.
  nlohmann::json on_chunk(const di_chunk& c);
  // The final stream chunk with usage and no choices (stream_options.include_usage).
  nlohmann::json usage_chunk() const;
  // The non-streamed body (a choice the engine did not finish has finish_reason null).
  nlohmann::json response() const;
  bool finished() const;  // every choice has its finish reason

 private:
  struct Choice {
    std::string text;
    std::string finish_reason;  // empty while running
    nlohmann::json logprobs;    // legacy shape, null without logprobs
    int64_t completion_tokens = 0;
    bool started = false;  // a chunk of it went out (the echo with the first)
  };
  nlohmann::json chunk_logprobs(Choice& choice, const di_chunk& c, size_t text_start);
  nlohmann::json envelope(nlohmann::json choices) const;
  nlohmann::json usage() const;

  std::string id_;
  int64_t created_;
  std::string model_;
  int32_t logprobs_;
  const di_tokenizer* tokenizer_;
  std::string echo_;
  std::vector<Choice> choices_;
  int64_t prompt_tokens_ = 0;
};

// The OpenAI finish_reason for an engine finish (DI_FINISH_*): "stop", "length", or "" while
// running; a cancel or an error is neither ("" — the handler reports those).
const char* completions_finish_reason(int32_t finish);

}  // namespace di::server
