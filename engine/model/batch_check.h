// check_batch: what every family verifies about a ForwardBatch before running it (token ids in
// the vocabulary, a cache, sane positions) and the logits rows it will produce; and the
// per-sequence forward loop built on it. Knows no family.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/model/model.h"

namespace di::engine {

// The number of logits rows `batch` yields (num_tokens per all_logits sequence, else 1), or an
// error naming the first bad field ("seqs[1].tokens[3]: 700 is outside the vocabulary [0, 512)").
Result<int64_t> check_batch(const ForwardBatch& batch, int64_t vocab_size, int64_t max_position_embeddings);

// The whole of a CPU family's Model::forward: checks `batch`, sizes `logits` and runs
// `forward_sequence(seq, first_logits_row)` for each sequence in order.
template <class ForwardSequence>
Status forward_each_sequence(const ForwardBatch& batch, int64_t vocab_size, int64_t max_position_embeddings,
                             std::vector<float>& logits, ForwardSequence&& forward_sequence) {
  DI_ASSIGN_OR_RETURN(int64_t rows, check_batch(batch, vocab_size, max_position_embeddings));
  logits.assign(static_cast<size_t>(rows * vocab_size), 0.0f);
  int64_t row = 0;
  for (const SequenceInput& s : batch.seqs) {
    forward_sequence(s, logits.data() + row * vocab_size);
    row += s.all_logits ? s.num_tokens : 1;
  }
  return Status::ok();
}

}  // namespace di::engine
