// StepBatch: see step_batch.h. The layout is built in two passes over the batch: sizes first
// (so the host buffer grows once), then contents; the uploaded CacheViews point at the device
// addresses their block tables will have after the upload.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/step_batch.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

namespace {

int64_t aligned(int64_t bytes) { return (bytes + 15) / 16 * 16; }

}  // namespace

Status StepBatch::pack(const ForwardBatch& batch, const std::vector<CacheGroupSpec>& groups, int32_t rows,
                       int32_t seqs) {
  const int64_t S_real = static_cast<int64_t>(batch.seqs.size()), G = static_cast<int64_t>(groups.size());
  int64_t T_real = 0, logit_rows = 0;
  max_end_ = 0;
  std::vector<kernels::CacheView> views(static_cast<size_t>(S_real * G));
  for (int64_t b = 0; b < S_real; ++b) {
    const SequenceInput& in = batch.seqs[b];
    T_real += in.num_tokens;
    logit_rows += in.all_logits ? in.num_tokens : 1;
    max_end_ = std::max(max_end_, in.start_pos + in.num_tokens);
    const std::string where = "seqs[" + std::to_string(b) + "].cache";
    for (int64_t g = 0; g < G; ++g) {
      kernels::CacheView& v = views[b * G + g];
      if (!in.cache || !in.cache->paged_view(static_cast<int32_t>(g), &v) || !v.on_device)
        return Status::invalid_argument(where + ": the CUDA model needs a paged cache in device memory");
      const int64_t needed = cache_entries_needed(groups[g], in.start_pos + in.num_tokens);
      if (needed > 0 && ((needed * v.compress_rate - 1) / v.block_size) >= v.num_blocks)
        return Status::invalid_argument(where + ": group '" + groups[g].name + "' has no room for " +
                                        std::to_string(needed) + " entries");
    }
  }
  if (max_end_ > INT32_MAX) return Status::limit("a sequence is longer than 2^31 tokens");
  const int64_t T = std::max<int64_t>(rows, T_real), S = std::max<int64_t>(seqs, S_real);
  const int64_t R = std::max<int64_t>(logit_rows, T == T_real ? logit_rows : T);
  int64_t bytes = 0;
  auto take = [&](int64_t n) {
    const int64_t at = bytes;
    bytes += aligned(n);
    return at;
  };
  off_ids_ = take(T * 4);
  off_seq_ = take(T * 4);
  off_pos_ = take(T * 4);
  off_start_ = take(S * 4);
  off_end_ = take(S * 4);
  off_row0_ = take(S * 4);
  off_logit_rows_ = take(R * 4);
  off_views_ = take(S * G * static_cast<int64_t>(sizeof(kernels::CacheView)));
  table_at_.assign(static_cast<size_t>(S_real * G), 0);
  for (int64_t i = 0; i < S_real * G; ++i) table_at_[i] = take(views[i].num_blocks * 4);
  used_ = bytes;
  DI_RETURN_IF_ERROR(host_.grow(bytes, "step batch"));
  if (bytes > buffer_.bytes()) {
    // Graphs hold this buffer's address: grow with room so it rarely moves.
    DI_RETURN_IF_ERROR(buffer_.allocate(std::max<int64_t>({bytes * 2, buffer_.bytes() * 2, int64_t{1} << 20})));
    moved_pending_ = true;
  }
  std::memset(host_.get(), 0, static_cast<size_t>(bytes));
  auto* ids = reinterpret_cast<int32_t*>(host_.get() + off_ids_);
  auto* seq = reinterpret_cast<int32_t*>(host_.get() + off_seq_);
  auto* pos = reinterpret_cast<int32_t*>(host_.get() + off_pos_);
  auto* start = reinterpret_cast<int32_t*>(host_.get() + off_start_);
  auto* end = reinterpret_cast<int32_t*>(host_.get() + off_end_);
  auto* row0 = reinterpret_cast<int32_t*>(host_.get() + off_row0_);
  auto* lrows = reinterpret_cast<int32_t*>(host_.get() + off_logit_rows_);
  auto* cviews = reinterpret_cast<kernels::CacheView*>(host_.get() + off_views_);
  const auto dev = reinterpret_cast<uint64_t>(buffer_.get());
  int64_t row = 0, lr = 0;
  for (int64_t b = 0; b < S_real; ++b) {
    const SequenceInput& in = batch.seqs[b];
    start[b] = static_cast<int32_t>(in.start_pos);
    end[b] = static_cast<int32_t>(in.start_pos + in.num_tokens);
    row0[b] = static_cast<int32_t>(row);
    for (int32_t i = 0; i < in.num_tokens; ++i, ++row) {
      ids[row] = in.tokens[i];
      seq[row] = static_cast<int32_t>(b);
      pos[row] = static_cast<int32_t>(in.start_pos + i);
      if (in.all_logits || i == in.num_tokens - 1) lrows[lr++] = static_cast<int32_t>(row);
    }
    for (int64_t g = 0; g < G; ++g) {
      const kernels::CacheView& v = views[b * G + g];
      std::memcpy(host_.get() + table_at_[b * G + g], v.block_ids, static_cast<size_t>(v.num_blocks) * 4);
      cviews[b * G + g] = v;
      cviews[b * G + g].block_ids = reinterpret_cast<const int32_t*>(dev + table_at_[b * G + g]);
    }
  }
  for (; row < T; ++row) seq[row] = -1;  // padding: id 0 at position 0, no sequence
  for (; lr < R; ++lr) lrows[lr] = static_cast<int32_t>(std::min<int64_t>(lr, T - 1));
  num_logit_rows_ = logit_rows;
  device_.num_tokens = static_cast<int32_t>(T);
  device_.num_seqs = static_cast<int32_t>(S);
  device_.num_groups = static_cast<int32_t>(G);
  device_.ids = reinterpret_cast<const int32_t*>(dev + off_ids_);
  device_.seq = reinterpret_cast<const int32_t*>(dev + off_seq_);
  device_.pos = reinterpret_cast<const int32_t*>(dev + off_pos_);
  device_.seq_start = reinterpret_cast<const int32_t*>(dev + off_start_);
  device_.seq_end = reinterpret_cast<const int32_t*>(dev + off_end_);
  device_.seq_row0 = reinterpret_cast<const int32_t*>(dev + off_row0_);
  device_.views = reinterpret_cast<const kernels::CacheView*>(dev + off_views_);
  logit_rows_ = reinterpret_cast<const int32_t*>(dev + off_logit_rows_);
  return Status::ok();
}

Status StepBatch::upload(void* stream, bool* moved) {
  *moved = moved_pending_;
  moved_pending_ = false;
  return kc::copy_to_device_async(buffer_.get(), host_.get(), used_, stream);
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
