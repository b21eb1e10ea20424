// Token bitmask kernel and its staging. One thread per logit: the 32 threads of a warp read the
// same mask word (one broadcast load) and write 32 adjacent logits, so stores stay coalesced.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/cuda/device.h"
#include "kernels/cuda/token_mask.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void token_bitmask_kernel(float* __restrict__ logits, int64_t stride, int64_t vocab,
                                     const uint32_t* __restrict__ masks, int64_t words_per_row,
                                     const int32_t* __restrict__ rows) {
  const int32_t row = rows[blockIdx.y];
  if (row < 0) return;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= vocab) return;
  const uint32_t w = masks[static_cast<int64_t>(blockIdx.y) * words_per_row + (t >> 5)];
  if (!((w >> (t & 31)) & 1u)) logits[row * stride + t] = -INFINITY;
}

int64_t rows_bytes(int64_t slots) { return (slots * 4 + 255) / 256 * 256; }

}  // namespace

Status apply_token_bitmask(float* logits, int64_t stride, int64_t vocab, const uint32_t* masks,
                           int64_t words_per_row, const int32_t* rows, int64_t num_slots, void* stream) {
  if (vocab <= 0 || stride < vocab) return Status::invalid_argument("apply_token_bitmask: stride must be >= vocab > 0");
  if (words_per_row < (vocab + 31) / 32)
    return Status::invalid_argument("apply_token_bitmask: words_per_row " + std::to_string(words_per_row) +
                                    " < ceil(vocab / 32) = " + std::to_string((vocab + 31) / 32));
  if (num_slots < 0 || num_slots > 65535) return Status::invalid_argument("apply_token_bitmask: num_slots out of range");
  if (num_slots == 0) return Status::ok();
  if (!logits || !masks || !rows) return Status::invalid_argument("apply_token_bitmask: null pointer");
  const dim3 grid(static_cast<unsigned>((vocab + kThreads - 1) / kThreads), static_cast<unsigned>(num_slots));
  token_bitmask_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(logits, stride, vocab, masks,
                                                                                 words_per_row, rows);
  return cuda_status(cudaGetLastError(), "token_bitmask_kernel launch");
}

TokenMaskStager::~TokenMaskStager() {
  if (uploaded_) {
    cudaEventSynchronize(static_cast<cudaEvent_t>(uploaded_));
    cudaEventDestroy(static_cast<cudaEvent_t>(uploaded_));
  }
  if (copy_stream_) cudaStreamDestroy(static_cast<cudaStream_t>(copy_stream_));
  if (host_) cudaFreeHost(host_);
  if (device_) cudaFree(device_);
}

Status TokenMaskStager::ensure_(int64_t bytes) {
  if (!copy_stream_) {
    cudaStream_t s = nullptr;
    DI_RETURN_IF_ERROR(cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
    copy_stream_ = s;
    cudaEvent_t e = nullptr;
    DI_RETURN_IF_ERROR(cuda_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate"));
    uploaded_ = e;
  }
  if (bytes <= capacity_) return Status::ok();
  if (host_) cudaFreeHost(host_);
  if (device_) cudaFree(device_);
  host_ = device_ = nullptr;
  capacity_ = 0;
  const int64_t grown = bytes * 3 / 2;
  DI_RETURN_IF_ERROR(cuda_status(cudaHostAlloc(&host_, static_cast<size_t>(grown), cudaHostAllocDefault), "cudaHostAlloc"));
  const cudaError_t e = cudaMalloc(&device_, static_cast<size_t>(grown));
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status::out_of_memory("token masks: cudaMalloc of " + std::to_string(grown) + " bytes: " + cudaGetErrorString(e));
  }
  capacity_ = grown;
  return Status::ok();
}

Result<uint32_t*> TokenMaskStager::host_masks(int64_t num_slots, int64_t words_per_row) {
  if (num_slots <= 0 || words_per_row <= 0) return Status::invalid_argument("token masks: empty batch");
  // The previous upload may still be reading the pinned buffer.
  if (uploaded_) DI_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(static_cast<cudaEvent_t>(uploaded_)), "cudaEventSynchronize"));
  DI_RETURN_IF_ERROR(ensure_(rows_bytes(num_slots) + num_slots * words_per_row * 4));
  slots_ = num_slots;
  words_ = words_per_row;
  return reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(host_) + rows_bytes(num_slots));
}

Status TokenMaskStager::apply(float* logits, int64_t stride, int64_t vocab, const int32_t* rows, void* stream) {
  if (slots_ == 0) return Status::invalid_argument("token masks: apply() without host_masks()");
  std::memcpy(host_, rows, static_cast<size_t>(slots_) * 4);
  const int64_t bytes = rows_bytes(slots_) + slots_ * words_ * 4;
  auto cs = static_cast<cudaStream_t>(copy_stream_);
  auto ev = static_cast<cudaEvent_t>(uploaded_);
  DI_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(device_, host_, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, cs),
                                 "cudaMemcpyAsync masks"));
  DI_RETURN_IF_ERROR(cuda_status(cudaEventRecord(ev, cs), "cudaEventRecord"));
  DI_RETURN_IF_ERROR(cuda_status(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), ev, 0), "cudaStreamWaitEvent"));
  const auto* d = static_cast<const uint8_t*>(device_);
  const int64_t slots = slots_;
  slots_ = 0;
  return apply_token_bitmask(logits, stride, vocab, reinterpret_cast<const uint32_t*>(d + rows_bytes(slots)), words_,
                             reinterpret_cast<const int32_t*>(d), slots, stream);
}

}  // namespace di::kernels::cuda
