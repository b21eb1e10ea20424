// check_batch: see batch_check.h.
#include "engine/model/batch_check.h"

#include <string>

namespace di::engine {

Result<int64_t> check_batch(const ForwardBatch& batch, int64_t vocab_size, int64_t max_position_embeddings) {
  int64_t rows = 0;
  for (size_t b = 0; b < batch.seqs.size(); ++b) {
    const SequenceInput& s = batch.seqs[b];
    const std::string where = "seqs[" + std::to_string(b) + "]";
    if (s.num_tokens < 1) return Status::invalid_argument(where + ".num_tokens: expected >= 1, got " + std::to_string(s.num_tokens));
    if (!s.tokens) return Status::invalid_argument(where + ".tokens: null");
    if (!s.cache) return Status::invalid_argument(where + ".cache: null");
    if (s.start_pos < 0) return Status::invalid_argument(where + ".start_pos: expected >= 0, got " + std::to_string(s.start_pos));
    // Positions past the rope table still compute, but a model is only defined up to here.
    if (max_position_embeddings > 0 && s.start_pos + s.num_tokens > max_position_embeddings)
      return Status::invalid_argument(where + ": positions up to " + std::to_string(s.start_pos + s.num_tokens) +
                                      " exceed max_position_embeddings " + std::to_string(max_position_embeddings));
    for (int32_t i = 0; i < s.num_tokens; ++i)
      if (s.tokens[i] < 0 || s.tokens[i] >= vocab_size)
        return Status::invalid_argument(where + ".tokens[" + std::to_string(i) + "]: " + std::to_string(s.tokens[i]) +
                                        " is outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
    rows += s.all_logits ? s.num_tokens : 1;
  }
  return rows;
}

}  // namespace di::engine
