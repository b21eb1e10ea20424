// rope_interleaved: see rope_interleaved.h. One block per row, a thread per (vector, pair).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/rope_interleaved.h"

namespace di::kernels::cuda {
namespace {

constexpr int64_t kMaxRotPairs = 512;

__global__ void rope_interleaved_kernel(float* x, int64_t row_stride, int64_t count, int64_t width,
                                        int64_t vec_stride, int64_t pos0, int64_t pos_step, const int32_t* positions,
                                        const float* inv_freq, int64_t rot_dim, float scale, bool inverse) {
  const int64_t half = rot_dim / 2;
  const float pos = static_cast<float>(positions ? int64_t{positions[blockIdx.x]}
                                                 : pos0 + static_cast<int64_t>(blockIdx.x) * pos_step);
  float* row = x + blockIdx.x * row_stride;
  // The row's angles once (sin and cos in double are the costly part), shared by its vectors.
  __shared__ float cs[kMaxRotPairs], sn[kMaxRotPairs];
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float f = __fmul_rn(inv_freq[i], pos);  // no contraction: the CPU rounds this product
    double sd, cd;
    sincos(static_cast<double>(f), &sd, &cd);  // one argument reduction for both
    cs[i] = static_cast<float>(cd) * scale;
    const float s = static_cast<float>(sd) * scale;
    sn[i] = inverse ? -s : s;
  }
  __syncthreads();
  // 32-bit index arithmetic: a 64-bit division per pair cost more than the rotation.
  const int pairs = static_cast<int>(count * half), h = static_cast<int>(half);
  for (int k = threadIdx.x; k < pairs; k += blockDim.x) {
    const int v = k / h, i = k - v * h;
    const float c = cs[i], s = sn[i];
    float* r = row + int64_t{v} * vec_stride + (width - rot_dim);
    const float x0 = r[2 * i], x1 = r[2 * i + 1];
    r[2 * i] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    r[2 * i + 1] = __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
  }
}

}  // namespace

Status rope_interleaved(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width, int64_t vec_stride,
                        int64_t pos0, int64_t pos_step, const float* inv_freq, int64_t rot_dim, float scale,
                        bool inverse, void* stream) {
  if (rows <= 0 || count <= 0) return Status::ok();
  if (rot_dim <= 0 || rot_dim % 2 || rot_dim > width || rot_dim > 2 * kMaxRotPairs)
    return Status::invalid_argument("rope_interleaved: rot_dim " + std::to_string(rot_dim) +
                                    " must be even and <= width " + std::to_string(width));
  rope_interleaved_kernel<<<rows, 512, 0, as_stream(stream)>>>(x, row_stride, count, width, vec_stride, pos0, pos_step,
                                                               nullptr, inv_freq, rot_dim, scale, inverse);
  return launch_status("rope_interleaved");
}

Status rope_interleaved_at(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width, int64_t vec_stride,
                           const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale, bool inverse,
                           void* stream) {
  if (rows <= 0 || count <= 0) return Status::ok();
  if (rot_dim <= 0 || rot_dim % 2 || rot_dim > width || rot_dim > 2 * kMaxRotPairs || !positions)
    return Status::invalid_argument("rope_interleaved_at: rot_dim " + std::to_string(rot_dim) +
                                    " must be even and <= width " + std::to_string(width) + ", positions given");
  rope_interleaved_kernel<<<rows, 512, 0, as_stream(stream)>>>(x, row_stride, count, width, vec_stride, 0, 0, positions,
                                                               inv_freq, rot_dim, scale, inverse);
  return launch_status("rope_interleaved_at");
}

}  // namespace di::kernels::cuda
