// CompletionChunk: one piece of a request's output as the caller receives it — new token ids,
// the text they complete, logprobs, finish reason, counts. Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/sequence.h"

namespace di::engine {

struct CompletionChunk {
  uint64_t request_id = 0;
  int32_t index = 0;  // which of the request's n completions
  std::vector<int32_t> token_ids;
  std::string text;   // never ends inside a UTF-8 character
  std::vector<float> logprobs;  // one per token when requested
  std::vector<std::vector<std::pair<int32_t, float>>> top_logprobs;  // one list per token
  FinishReason finish_reason = FinishReason::kNone;  // set on the completion's last chunk
  std::string error;  // with FinishReason::kError
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t completion_tokens = 0;  // so far, for this completion
  bool is_final = false;  // the last chunk of the whole request
};

}  // namespace di::engine
