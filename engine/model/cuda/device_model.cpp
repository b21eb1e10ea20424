// DeviceModel: see device_model.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/device_model.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;
using kc::DType;

DeviceModel::DeviceModel(DType dtype, const ModelOptions& options, int64_t activation_reserve)
    : dtype_(dtype), memory_(options.gpu_memory_utilization, activation_reserve) {}

DeviceModel::~DeviceModel() {
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Status DeviceModel::open_stream() {
  if (kc::device_count() == 0) return Status::device("device 'cuda': no CUDA GPU is visible");
  cudaStream_t s = nullptr;
  DI_RETURN_IF_ERROR(kc::cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  stream_ = s;
  DI_ASSIGN_OR_RETURN(gemm_, kc::Gemm::create(stream_));
  return Status::ok();
}

Status DeviceModel::upload_f32(const std::vector<float>& host, kc::DeviceBuffer& buf) {
  const int64_t bytes = static_cast<int64_t>(host.size() * 4);
  DI_RETURN_IF_ERROR(buf.allocate(bytes));
  return kc::copy_to_device(buf.get(), host.data(), bytes);
}

Status DeviceModel::linear(const float* x, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y,
                           int64_t ldy) {
  if (dtype_ == DType::kF32) return gemm_.linear(x, M, K, ldx, w, N, DType::kF32, y, ldy, DType::kF32);
  // bf16 weights: the activations are rounded to bf16 for the tensor cores, the sum stays fp32.
  DI_RETURN_IF_ERROR(kc::convert_rows_from_f32(x, M, K, ldx, linear_stage_, dtype_, stream_));
  return gemm_.linear(linear_stage_, M, K, K, w, N, dtype_, y, ldy, DType::kF32);
}

Result<const int32_t*> DeviceModel::upload_metadata(const std::vector<int32_t>& host) {
  const int64_t bytes = static_cast<int64_t>(host.size()) * 4;
  if (bytes > metadata_.bytes()) DI_RETURN_IF_ERROR(metadata_.allocate(std::max(bytes, 2 * metadata_.bytes())));
  DI_RETURN_IF_ERROR(kc::copy_to_device(metadata_.get(), host.data(), bytes));
  return metadata_.as<const int32_t>();
}

kc::CacheView DeviceModel::cache_view(const PagedGroupView& v, const int32_t* block_ids) {
  return {reinterpret_cast<uint64_t>(v.base), v.layer_stride, v.block_stride, v.entry_bytes, v.block_size,
          v.compress_rate, block_ids};
}

Result<float*> DeviceModel::logits_rows(int64_t rows) {
  const int64_t bytes = rows * info_.vocab_size * 4;
  if (bytes > logits_out_.bytes())
    DI_RETURN_IF_ERROR(logits_out_.allocate(std::max(bytes, logits_out_.bytes() * 3 / 2)));
  return logits_out_.as<float>();
}

Status DeviceModel::copy_logits_out(int64_t rows, std::vector<float>& logits) {
  logits.resize(static_cast<size_t>(rows * info_.vocab_size));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(logits.data(), logits_out_.get(), rows * info_.vocab_size * 4, stream_));
  return kc::stream_synchronize(stream_);
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
