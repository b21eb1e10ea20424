// The sampling fields vLLM accepts on top of each API's own (the rows of request/sampling_fields.h
// marked api, and seed, logit_bias, stop_token_ids), read the same way for every protocol.
// Validation only; the engine interprets them.
#pragma once

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

// Reads the fields that are absent from `s` (a protocol's own reading runs first and wins).
Status read_extra_sampling(const Fields& f, SamplingOptions& s);

// Stop strings: a string or an array of at most `max_count` strings. Empty strings are dropped
// unless `reject_empty` (Anthropic rejects them).
Status read_stop(const Fields& f, std::string_view key, size_t max_count, bool reject_empty,
                 std::vector<std::string>& out);

}  // namespace di::recipe
