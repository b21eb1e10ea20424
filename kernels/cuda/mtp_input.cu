// Kernel of mtp_input.h: a flat grid-stride loop over the streams.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mtp_input.h"

namespace di::kernels::cuda {
namespace {

__global__ void add_to_streams_kernel(float* streams, const float* add, int64_t n, int32_t hc, int64_t dim) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / (hc * dim), d = i % dim;
    streams[i] += add[row * dim + d];
  }
}

}  // namespace

Status add_to_streams(float* streams, const float* add, int64_t rows, int32_t hc, int64_t dim, void* stream) {
  if (rows <= 0) return Status::ok();
  const int64_t n = rows * hc * dim;
  add_to_streams_kernel<<<flat_blocks(n), 256, 0, as_stream(stream)>>>(streams, add, n, hc, dim);
  return launch_status("add_to_streams");
}

}  // namespace di::kernels::cuda
