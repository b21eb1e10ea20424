// mla_stage_query: see mla_query.h. A thread per (row, head, channel), 32-bit indices.
#include <cuda_bf16.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mla_query.h"

namespace di::kernels::cuda {
namespace {

__global__ void stage_query_kernel(const float* q, int n, int qk, int nope, int entry, int latent,
                                   __nv_bfloat16* q16, float* qlat) {
  pdl_sync();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int vec = i / qk, c = i - vec * qk;
    const float v = q[i];
    if (c < nope) {
      if (q16) q16[i] = __float2bfloat16(v);
    } else {
      qlat[int64_t{vec} * entry + latent + (c - nope)] = v;
    }
  }
}

}  // namespace

Status mla_stage_query(const float* q, int64_t rows, int64_t heads, int64_t nope, int64_t rope, int64_t latent,
                       void* q16, float* qlat, void* stream) {
  if (rows <= 0) return Status::ok();
  const int64_t n = rows * heads * (nope + rope);
  if (heads < 1 || nope < 0 || rope < 0 || latent < 0 || n >= (int64_t{1} << 31))
    return Status::invalid_argument("mla_stage_query: " + std::to_string(rows) + " rows of " + std::to_string(heads) +
                                    " heads x (" + std::to_string(nope) + " + " + std::to_string(rope) +
                                    ") channels: counts must be >= 0 and fewer than 2^31 in all");
  constexpr int kThreads = 256;
  const unsigned blocks = static_cast<unsigned>(flat_blocks(n, kThreads));
  launch_pdl(stage_query_kernel, blocks, kThreads, 0, as_stream(stream), q, static_cast<int>(n),
             static_cast<int>(nope + rope), static_cast<int>(nope), static_cast<int>(latent + rope),
             static_cast<int>(latent), static_cast<__nv_bfloat16*>(q16), qlat);
  return launch_status("mla_stage_query");
}

}  // namespace di::kernels::cuda
