// Structured output on the GPU: a batch of token bitmasks (ceil(vocab/32) uint32 words per row,
// bit t % 32 of word t / 32 = token t allowed) applied to device logits, -inf where a bit is 0.
// Owns the upload path (pinned staging, a copy stream); computes no masks itself (engine/constrain does).
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// For each slot i < num_slots with rows[i] >= 0: logits[rows[i] * stride + t] = -inf for every
// t < vocab whose bit is 0 in masks[i * words_per_row ...]; other logits are left as they are.
// logits, masks and rows are device pointers; words_per_row >= ceil(vocab / 32). `stream` is a
// cudaStream_t (nullptr = default). Errors: invalid arguments, or the launch's device error.
Status apply_token_bitmask(float* logits, int64_t stride, int64_t vocab, const uint32_t* masks,
                           int64_t words_per_row, const int32_t* rows, int64_t num_slots, void* stream);

// Moves a step's masks to the device while the compute stream is busy: the host writes them into
// pinned memory (host_masks), apply() uploads them on a copy stream of its own and enqueues the
// mask kernel on the compute stream behind that upload, so only the kernel is on the step's path.
// One per model; used by one thread at a time.
class TokenMaskStager {
 public:
  TokenMaskStager() = default;
  ~TokenMaskStager();
  TokenMaskStager(const TokenMaskStager&) = delete;
  TokenMaskStager& operator=(const TokenMaskStager&) = delete;

  // Pinned host memory for `num_slots` masks of `words_per_row` words (slot i at i * words_per_row),
  // contents undefined. Waits for the previous apply()'s upload to finish reading it first.
  Result<uint32_t*> host_masks(int64_t num_slots, int64_t words_per_row);

  // Uploads the slots from the last host_masks() with their logits rows (host array; -1 skips a
  // slot) and enqueues apply_token_bitmask on `stream` after the upload. Returns immediately.
  Status apply(float* logits, int64_t stride, int64_t vocab, const int32_t* rows, void* stream);

 private:
  Status ensure_(int64_t bytes);

  void* host_ = nullptr;    // pinned: [rows, padded to 256 bytes][masks]
  void* device_ = nullptr;  // the same layout
  int64_t capacity_ = 0;
  void* copy_stream_ = nullptr;  // cudaStream_t
  void* uploaded_ = nullptr;     // cudaEvent_t, recorded after each upload
  int64_t slots_ = 0, words_ = 0;
};

}  // namespace di::kernels::cuda
