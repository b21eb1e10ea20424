// ExpertRows: see expert_rows.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/expert_rows.h"

#include "kernels/cuda/device_buffer.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

Result<std::vector<int64_t>> ExpertRows::group(const int32_t* d_expert_ids, const float* d_expert_weights,
                                               int64_t L, int64_t K, int64_t E, int32_t* d_rows,
                                               float* d_row_weights, void* stream, const std::string& family) {
  expert_ids_.resize(static_cast<size_t>(L * K));
  expert_weights_.resize(static_cast<size_t>(L * K));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(expert_ids_.data(), d_expert_ids, L * K * 4, stream));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(expert_weights_.data(), d_expert_weights, L * K * 4, stream));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream));
  std::vector<int64_t> offsets(static_cast<size_t>(E + 1), 0);
  for (int64_t i = 0; i < L * K; ++i) {
    const int32_t e = expert_ids_[i];
    if (e < 0 || e >= E) return Status::internal(family + " cuda: routed expert " + std::to_string(e));
    ++offsets[e + 1];
  }
  for (int64_t e = 0; e < E; ++e) offsets[e + 1] += offsets[e];  // now the start of each expert's list
  rows_.assign(static_cast<size_t>(L * K), 0);
  row_weights_.assign(static_cast<size_t>(L * K), 0.f);
  std::vector<int64_t> fill(offsets.begin(), offsets.end() - 1);
  for (int64_t row = 0; row < L; ++row)
    for (int64_t k = 0; k < K; ++k) {
      const int32_t e = expert_ids_[row * K + k];
      rows_[fill[e]] = static_cast<int32_t>(row);
      row_weights_[fill[e]++] = expert_weights_[row * K + k];
    }
  DI_RETURN_IF_ERROR(kc::copy_to_device_async(d_rows, rows_.data(), L * K * 4, stream));
  DI_RETURN_IF_ERROR(kc::copy_to_device_async(d_row_weights, row_weights_.data(), L * K * 4, stream));
  return offsets;
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
