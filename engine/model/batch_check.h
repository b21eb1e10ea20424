// check_batch: what every family verifies about a ForwardBatch before running it (token ids in
// the vocabulary, a cache, sane positions) and the logits rows it will produce. Knows no family.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "engine/model/model.h"

namespace di::engine {

// The number of logits rows `batch` yields (num_tokens per all_logits sequence, else 1), or an
// error naming the first bad field ("seqs[1].tokens[3]: 700 is outside the vocabulary [0, 512)").
Result<int64_t> check_batch(const ForwardBatch& batch, int64_t vocab_size, int64_t max_position_embeddings);

}  // namespace di::engine
