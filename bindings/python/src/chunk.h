// ChunkData: an owned copy of one di_chunk (the library's is borrowed until the next poll), and
// the way back to a di_chunk view for di_parse_push_chunk. Plain data; no Python inside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "deepinfer.h"

namespace di::python {

struct ChunkData {
  uint32_t index = 0;
  uint64_t request_id = 0;
  std::vector<int32_t> token_ids;
  std::string text;
  bool has_logprobs = false;
  std::vector<float> logprobs;
  uint32_t num_top_logprobs = 0;
  std::vector<int32_t> top_logprob_ids;  // token_ids.size() x num_top_logprobs
  std::vector<float> top_logprobs;
  int32_t finish_reason = DI_FINISH_NONE;
  bool is_final = false;
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::string error_message;

  static ChunkData copy(const di_chunk& c) {
    ChunkData d;
    d.index = c.index;
    d.request_id = c.request_id;
    d.token_ids.assign(c.token_ids, c.token_ids + (c.token_ids ? c.num_tokens : 0));
    d.text.assign(c.text ? c.text : "", c.text ? c.text_len : 0);
    if (c.logprobs) {
      d.has_logprobs = true;
      d.logprobs.assign(c.logprobs, c.logprobs + c.num_tokens);
    }
    if (c.num_top_logprobs > 0 && c.top_logprob_ids && c.top_logprobs) {
      const size_t n = c.num_tokens * c.num_top_logprobs;
      d.num_top_logprobs = c.num_top_logprobs;
      d.top_logprob_ids.assign(c.top_logprob_ids, c.top_logprob_ids + n);
      d.top_logprobs.assign(c.top_logprobs, c.top_logprobs + n);
    }
    d.finish_reason = c.finish_reason;
    d.is_final = c.is_final != 0;
    d.prompt_tokens = c.prompt_tokens;
    d.cached_prompt_tokens = c.cached_prompt_tokens;
    d.completion_tokens = c.completion_tokens;
    if (c.error_message) d.error_message.assign(c.error_message, c.error_message_len);
    return d;
  }

  // A borrowed view of this copy, valid while it lives unchanged.
  di_chunk view() const {
    di_chunk c{};
    c.struct_size = sizeof c;
    c.index = index;
    c.request_id = request_id;
    c.token_ids = token_ids.data();
    c.num_tokens = token_ids.size();
    c.text = text.c_str();
    c.text_len = text.size();
    c.logprobs = has_logprobs ? logprobs.data() : nullptr;
    c.num_top_logprobs = num_top_logprobs;
    c.top_logprob_ids = num_top_logprobs ? top_logprob_ids.data() : nullptr;
    c.top_logprobs = num_top_logprobs ? top_logprobs.data() : nullptr;
    c.finish_reason = finish_reason;
    c.is_final = is_final ? 1 : 0;
    c.prompt_tokens = prompt_tokens;
    c.cached_prompt_tokens = cached_prompt_tokens;
    c.completion_tokens = completion_tokens;
    c.error_message = error_message.c_str();
    c.error_message_len = error_message.size();
    return c;
  }
};

}  // namespace di::python
