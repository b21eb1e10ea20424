// rope_interleaved: see rope_interleaved.h. One block per row, a thread per (vector, pair);
// rms_norm_rope_at: a block per vector, the norm's block size and order, then the rotation.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/rope_interleaved.h"

namespace di::kernels::cuda {
namespace {

constexpr int64_t kMaxRotPairs = 512;

// A row's angles, computed once and shared by its vectors (sin and cos in double are the costly
// part; one argument reduction for both); the caller syncs before reading them.
__device__ __forceinline__ void row_angles(float pos, const float* inv_freq, int64_t half, float scale, float* cs,
                                           float* sn) {
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float f = __fmul_rn(inv_freq[i], pos);
    double sd, cd;
    sincos(static_cast<double>(f), &sd, &cd);  // no contraction above: the CPU rounds that product
    cs[i] = static_cast<float>(cd) * scale;
    sn[i] = static_cast<float>(sd) * scale;
  }
}

__global__ void rope_interleaved_kernel(float* x, int64_t row_stride, int64_t count, int64_t width,
                                        int64_t vec_stride, int64_t pos0, int64_t pos_step, const int32_t* positions,
                                        const float* inv_freq, int64_t rot_dim, float scale, bool inverse) {
  pdl_sync();
  const int64_t half = rot_dim / 2;
  const float pos = static_cast<float>(positions ? int64_t{positions[blockIdx.x]}
                                                 : pos0 + static_cast<int64_t>(blockIdx.x) * pos_step);
  float* row = x + blockIdx.x * row_stride;
  __shared__ float cs[kMaxRotPairs], sn[kMaxRotPairs];
  row_angles(pos, inv_freq, half, scale, cs, sn);
  __syncthreads();
  // 32-bit index arithmetic: a 64-bit division per pair cost more than the rotation.
  const int pairs = static_cast<int>(count * half), h = static_cast<int>(half);
  for (int k = threadIdx.x; k < pairs; k += blockDim.x) {
    const int v = k / h, i = k - v * h;
    const float c = cs[i], s = inverse ? -sn[i] : sn[i];
    float* r = row + int64_t{v} * vec_stride + (width - rot_dim);
    const float x0 = r[2 * i], x1 = r[2 * i + 1];
    r[2 * i] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    r[2 * i + 1] = __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
  }
}

__global__ void rms_norm_rope_kernel(NormRopeJob a, NormRopeJob b, int64_t dim, int64_t norm_dim, float eps,
                                     const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale,
                                     int64_t a_blocks) {
  pdl_sync();
  extern __shared__ float rot[];  // the normed rotary channels
  __shared__ float cs[kMaxRotPairs], sn[kMaxRotPairs];
  const bool first = blockIdx.x < a_blocks;
  const NormRopeJob& j = first ? a : b;
  const int64_t v = first ? blockIdx.x : blockIdx.x - a_blocks;
  const int64_t row = v / j.heads, half = rot_dim / 2, rot0 = dim - rot_dim;
  float* xr = j.x + row * j.stride + (v % j.heads) * dim;
  const float* w = j.weight;
  row_angles(static_cast<float>(positions[row]), inv_freq, half, scale, cs, sn);
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < norm_dim; i += blockDim.x) ss += xr[i] * xr[i];
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(norm_dim) + eps);  // syncs: x read, angles written
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float y = i < norm_dim ? xr[i] * inv * (w ? w[i] : 1.f) : xr[i];
    if (i < rot0) xr[i] = y;
    else rot[i - rot0] = y;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float c = cs[i], s = sn[i], x0 = rot[2 * i], x1 = rot[2 * i + 1];
    xr[rot0 + 2 * i] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    xr[rot0 + 2 * i + 1] = __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
  }
}

}  // namespace

Status rms_norm_rope_pair_at(const NormRopeJob& a, const NormRopeJob& b, int64_t rows, int64_t dim, float eps,
                             const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale,
                             void* stream, int64_t norm_dim) {
  if (rows <= 0) return Status::ok();
  if (norm_dim < 0) norm_dim = dim;
  if (a.heads < 1 || b.heads < 0 || (b.heads > 0 && !b.x) || !a.x || dim < 1 || rot_dim <= 0 || rot_dim % 2 ||
      rot_dim > dim || rot_dim > 2 * kMaxRotPairs || !positions || norm_dim < 1 ||
      (norm_dim != dim && norm_dim > dim - rot_dim))
    return Status::invalid_argument("rms_norm_rope_at: rot_dim " + std::to_string(rot_dim) +
                                    " must be even and <= dim " + std::to_string(dim) + ", positions given, norm_dim " +
                                    std::to_string(norm_dim) + " dim or at most dim - rot_dim, heads >= 1");
  // rms_norm's block size for the normed width: the same partial sums, so the same bits.
  const int threads = norm_dim >= 4096 ? 1024 : norm_dim >= 1024 ? 512 : 128;
  launch_pdl(rms_norm_rope_kernel, rows * (a.heads + b.heads), threads, rot_dim * sizeof(float), as_stream(stream), a,
             b, dim, norm_dim, eps, positions, inv_freq, rot_dim, scale, rows * a.heads);
  return launch_status("rms_norm_rope_at");
}

Status rms_norm_rope_at(float* x, const float* weight, int64_t rows, int64_t heads, int64_t dim, int64_t stride,
                        float eps, const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale,
                        void* stream, int64_t norm_dim) {
  return rms_norm_rope_pair_at({x, weight, heads, stride}, {nullptr, nullptr, 0, 0}, rows, dim, eps, positions,
                               inv_freq, rot_dim, scale, stream, norm_dim);
}

Status rope_interleaved(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width, int64_t vec_stride,
                        int64_t pos0, int64_t pos_step, const float* inv_freq, int64_t rot_dim, float scale,
                        bool inverse, void* stream) {
  if (rows <= 0 || count <= 0) return Status::ok();
  if (rot_dim <= 0 || rot_dim % 2 || rot_dim > width || rot_dim > 2 * kMaxRotPairs)
    return Status::invalid_argument("rope_interleaved: rot_dim " + std::to_string(rot_dim) +
                                    " must be even and <= width " + std::to_string(width));
  launch_pdl(rope_interleaved_kernel, rows, 512, 0, as_stream(stream), x, row_stride, count, width, vec_stride, pos0, pos_step,
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
  launch_pdl(rope_interleaved_kernel, rows, 512, 0, as_stream(stream), x, row_stride, count, width, vec_stride, 0, 0, positions,
                                                               inv_freq, rot_dim, scale, inverse);
  return launch_status("rope_interleaved_at");
}

}  // namespace di::kernels::cuda
