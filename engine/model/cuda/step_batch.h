// StepBatch: one forward's rows and sequences laid out as a kernels::cuda::TokenBatch (token ids,
// each row's sequence and position, each sequence's span and cache views with their block
// tables) in one pinned host buffer, uploaded by one copy into a device buffer whose address
// stays put, so CUDA graphs captured over it replay with new contents. It checks that every
// sequence brings paged device caches with room for this step, and pads a step to more rows and
// sequences (decode graph buckets) with rows that write nothing. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/model/cuda/pinned_buffer.h"
#include "engine/model/model.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/token_batch.h"

namespace di::engine::cuda {

class StepBatch {
 public:
  // Lays out `batch` for at least `rows` rows and `seqs` sequences (padding beyond the batch's),
  // the logits rows in batch order (every row of an all_logits sequence, else its last). Errors
  // name the sequence whose cache is not paged in device memory or has no room.
  Status pack(const ForwardBatch& batch, const std::vector<CacheGroupSpec>& groups, int32_t rows, int32_t seqs);
  // Copies the layout to the device on `stream`. Sets *moved when the device buffer had to grow
  // (graphs captured before point at the old one).
  Status upload(void* stream, bool* moved);

  const kernels::cuda::TokenBatch& device() const { return device_; }
  // The device token ids, for a kernel that rewrites them after upload() and before the step's
  // kernels read them (speculative decoding's next tokens, decided on the device).
  int32_t* device_ids() const { return const_cast<int32_t*>(device_.ids); }
  const int32_t* logit_rows() const { return logit_rows_; }  // device, num_logit_rows() + padding entries
  int64_t num_logit_rows() const { return num_logit_rows_; }  // the batch's own rows
  int64_t max_end() const { return max_end_; }                // the longest sequence after this step

 private:
  PinnedBuffer host_;
  int64_t used_ = 0;
  kernels::cuda::DeviceBuffer buffer_;
  kernels::cuda::TokenBatch device_;
  const int32_t* logit_rows_ = nullptr;
  int64_t num_logit_rows_ = 0, max_end_ = 0;
  // Where each array sits in the layout (byte offsets), and each block table's.
  int64_t off_ids_ = 0, off_seq_ = 0, off_pos_ = 0, off_start_ = 0, off_end_ = 0, off_row0_ = 0, off_views_ = 0,
          off_logit_rows_ = 0;
  std::vector<int64_t> table_at_;
  bool moved_pending_ = false;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
