// fp8 linear kernels. See fp8_linear.h.
#include <cuda_fp8.h>

#include <type_traits>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/fp8_linear.h"
#include "kernels/cuda/fp8_math.cuh"
#include "kernels/cuda/fp8_mma.cuh"

namespace di::kernels::cuda {
namespace {

constexpr int kWarps = 8;        // weight rows per block: one per warp
constexpr int kChunk = 16;       // weights a lane loads at once (one 16-byte load)
constexpr int kUnroll = 4;       // chunks in flight per lane
constexpr float kE4m3Max = 448.0f;

__host__ __device__ inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

__device__ __forceinline__ void bf16x16_to_f32(const __nv_bfloat16* p, float* f) {
  const uint4 a = __ldg(reinterpret_cast<const uint4*>(p)), b = __ldg(reinterpret_cast<const uint4*>(p + 8));
  const auto* ha = reinterpret_cast<const __nv_bfloat162*>(&a);
  const auto* hb = reinterpret_cast<const __nv_bfloat162*>(&b);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 ta = __bfloat1622float2(ha[i]), tb = __bfloat1622float2(hb[i]);
    f[2 * i] = ta.x;
    f[2 * i + 1] = ta.y;
    f[8 + 2 * i] = tb.x;
    f[8 + 2 * i + 1] = tb.y;
  }
}

__device__ __forceinline__ void x16_to_f32(const __nv_bfloat16* p, float* f) { bf16x16_to_f32(p, f); }
__device__ __forceinline__ void x16_to_f32(const float* p, float* f) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float4 t = __ldg(reinterpret_cast<const float4*>(p) + i);
    f[4 * i] = t.x;
    f[4 * i + 1] = t.y;
    f[4 * i + 2] = t.z;
    f[4 * i + 3] = t.w;
  }
}

template <typename X>
struct W8A16Args {
  const X* x;
  int64_t M, ldx, x_stride;
  Fp8Matrix w;
  int64_t rows_per_batch;
  float* y;
  int64_t ldy, y_stride;
};

// One warp per weight row: the row is read once (kUnroll 16-byte loads in flight per lane) for
// MT activation rows; each 16-wide chunk lies inside one 128-wide scale block, so its partial
// dot product is scaled once.
template <typename X, int MT>
__global__ void __launch_bounds__(kWarps * 32) w8a16_kernel(W8A16Args<X> a) {
  pdl_sync();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t b = blockIdx.y;
  const int64_t nb = int64_t{blockIdx.x} * kWarps + warp;
  if (nb >= a.rows_per_batch) return;
  const int64_t n = b * a.rows_per_batch + nb, K = a.w.cols;
  const uint8_t* wrow = a.w.data + n * K;
  const float* srow = a.w.scale + (n / a.w.block_rows) * a.w.scale_row_stride;
  const X* xb = a.x + b * a.x_stride;
  float* yb = a.y + b * a.y_stride;
  for (int64_t m0 = 0; m0 < a.M; m0 += MT) {
    const int mt = a.M - m0 < MT ? static_cast<int>(a.M - m0) : MT;
    float acc[MT];
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[m] = 0.f;
    for (int64_t base = int64_t{lane} * kChunk; base < K; base += int64_t{32} * kChunk * kUnroll) {
      uint4 raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t k = base + int64_t{u} * 32 * kChunk;
        raw[u] = k < K ? __ldg(reinterpret_cast<const uint4*>(wrow + k)) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t k = base + int64_t{u} * 32 * kChunk;
        if (k >= K) break;
        float wf[kChunk];
        e4m3x16_to_f32(raw[u], wf);
        const float s = srow[(k / kFp8BlockCols) * a.w.scale_col_stride];
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m < mt) {
            float xf[kChunk];
            x16_to_f32(xb + (m0 + m) * a.ldx + k, xf);
            float part = 0.f;
#pragma unroll
            for (int i = 0; i < kChunk; ++i) part = fmaf(wf[i], xf[i], part);
            acc[m] = fmaf(part, s, acc[m]);
          }
        }
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m < mt) {
        const float v = warp_sum(acc[m]);
        if (lane == 0) yb[(m0 + m) * a.ldy + nb] = v;
      }
    }
  }
}

// The tensor-core product for bf16 activations: a block per 16 weight rows of one group, its
// warps splitting the 64-wide k chunks (each inside one 128-wide scale block, so a chunk's sums
// are scaled once), kTiles tiles of 8 activation rows against each weight load, warp 0 adding the
// warps' sums. Wants K % 64 == 0, 16 | rows per group, 16-byte aligned rows.
constexpr int kMmaWarps = 8;

template <int kTiles>
__global__ void __launch_bounds__(kMmaWarps * 32) w8a16_mma_kernel(W8A16Args<__nv_bfloat16> a) {
  pdl_sync();
  __shared__ float red[kMmaWarps][kTiles * 4][32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int64_t b = blockIdx.y, nb0 = int64_t{blockIdx.x} * 16, n0 = b * a.rows_per_batch + nb0, K = a.w.cols;
  const uint8_t* w_lo = a.w.data + (n0 + g) * K + 16 * t;
  const uint8_t* w_hi = w_lo + 8 * K;
  const float* s_lo = a.w.scale + ((n0 + g) / a.w.block_rows) * a.w.scale_row_stride;
  const float* s_hi = a.w.scale + ((n0 + g + 8) / a.w.block_rows) * a.w.scale_row_stride;
  const __nv_bfloat16* xb = a.x + b * a.x_stride;
  float* yb = a.y + b * a.y_stride;
  const int64_t chunks = K / 64;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (int64_t m0 = 0; m0 < a.M; m0 += 8 * kTiles) {
    const __nv_bfloat16* xr[kTiles];
    bool valid[kTiles];
#pragma unroll
    for (int i = 0; i < kTiles; ++i) {
      const int64_t m = m0 + 8 * i + g;
      valid[i] = m < a.M;
      xr[i] = xb + (valid[i] ? m : 0) * a.ldx + 16 * t;
    }
    float d[kTiles][4] = {};
#pragma unroll 2
    for (int64_t c = warp; c < chunks; c += kMmaWarps) {
      const int64_t k = c * 64;
      const uint4 lo = __ldg(reinterpret_cast<const uint4*>(w_lo + k));
      const uint4 hi = __ldg(reinterpret_cast<const uint4*>(w_hi + k));
      uint4 x[2 * kTiles];
#pragma unroll
      for (int i = 0; i < kTiles; ++i) {
        x[2 * i] = valid[i] ? __ldg(reinterpret_cast<const uint4*>(xr[i] + k)) : zero;
        x[2 * i + 1] = valid[i] ? __ldg(reinterpret_cast<const uint4*>(xr[i] + k + 8)) : zero;
      }
      float p[kTiles][4] = {};
      fp8_mma_chunk<kTiles>(p, lo, hi, x);
      const int64_t sk = (k / kFp8BlockCols) * a.w.scale_col_stride;
      const float sl = __ldg(s_lo + sk), sh = __ldg(s_hi + sk);
#pragma unroll
      for (int i = 0; i < kTiles; ++i) {
        d[i][0] = fmaf(p[i][0], sl, d[i][0]);
        d[i][1] = fmaf(p[i][1], sl, d[i][1]);
        d[i][2] = fmaf(p[i][2], sh, d[i][2]);
        d[i][3] = fmaf(p[i][3], sh, d[i][3]);
      }
    }
    __syncthreads();  // the previous tiles' sums are read
#pragma unroll
    for (int i = 0; i < kTiles; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) red[warp][4 * i + j][lane] = d[i][j];
    __syncthreads();
    if (warp != 0) continue;
#pragma unroll
    for (int i = 0; i < kTiles; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float v = 0.f;
        for (int q = 0; q < kMmaWarps; ++q) v += red[q][4 * i + j][lane];
        // d[.][j]: weight row nb0 + g (+ 8 for j >= 2) of activation row m0 + 8i + 2t (+ 1 for odd j).
        const int64_t m = m0 + 8 * i + 2 * t + (j & 1);
        if (m < a.M) yb[m * a.ldy + nb0 + g + (j >> 1) * 8] = v;
      }
  }
}

__device__ __forceinline__ float x_value(const float* p) { return *p; }
__device__ __forceinline__ float x_value(const __nv_bfloat16* p) { return __bfloat162float(*p); }

// Any width or alignment (small models: a q_lora_rank of 40): a lane per input, one row per warp.
template <typename X>
__global__ void __launch_bounds__(kWarps * 32) w8a16_scalar_kernel(W8A16Args<X> a) {
  pdl_sync();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t b = blockIdx.y, nb = int64_t{blockIdx.x} * kWarps + warp;
  if (nb >= a.rows_per_batch) return;
  const int64_t n = b * a.rows_per_batch + nb, K = a.w.cols;
  const uint8_t* wrow = a.w.data + n * K;
  const float* srow = a.w.scale + (n / a.w.block_rows) * a.w.scale_row_stride;
  const X* xb = a.x + b * a.x_stride;
  for (int64_t m = 0; m < a.M; ++m) {
    float acc = 0.f;
    for (int64_t k = lane; k < K; k += 32)
      acc = fmaf(e4m3_value(wrow[k]) * srow[(k / kFp8BlockCols) * a.w.scale_col_stride], x_value(xb + m * a.ldx + k),
                 acc);
    acc = warp_sum(acc);
    if (lane == 0) a.y[b * a.y_stride + m * a.ldy + nb] = acc;
  }
}

template <typename X, int MT>
Status launch_w8a16(const W8A16Args<X>& a, int64_t batch, void* stream) {
  const dim3 grid(static_cast<unsigned>((a.rows_per_batch + kWarps - 1) / kWarps), static_cast<unsigned>(batch));
  launch_pdl(w8a16_kernel<X, MT>, grid, kWarps * 32, 0, as_stream(stream), a);
  return launch_status("fp8_linear_w8a16");
}

template <typename X>
bool takes_mma(const W8A16Args<X>& a) {
  if constexpr (!std::is_same_v<X, __nv_bfloat16>) {
    return false;
  } else {
    return a.w.cols % 64 == 0 && a.rows_per_batch % 16 == 0 && a.ldx % 8 == 0 && a.x_stride % 8 == 0 &&
           aligned16(a.x) && aligned16(a.w.data);
  }
}

template <typename X>
Status run_w8a16(const W8A16Args<X>& a, int64_t batch, bool cuda_cores, void* stream) {
  if constexpr (std::is_same_v<X, __nv_bfloat16>) {
    // One row streams faster through the CUDA-core kernel (measured on an H200: 0.031 vs 0.037 ms
    // for 16384 x 4096); from two rows the tensor cores win (0.039 vs 0.139 ms at eight).
    if (!cuda_cores && a.M >= 2 && takes_mma(a)) {
      const dim3 grid(static_cast<unsigned>(a.rows_per_batch / 16), static_cast<unsigned>(batch));
      if (a.M <= 8)
        launch_pdl(w8a16_mma_kernel<1>, grid, kMmaWarps * 32, 0, as_stream(stream), a);
      else
        launch_pdl(w8a16_mma_kernel<2>, grid, kMmaWarps * 32, 0, as_stream(stream), a);
      return launch_status("fp8_linear_w8a16 (tensor cores)");
    }
  }
  const bool vector = a.w.cols % kChunk == 0 && a.ldx % 8 == 0 && a.x_stride % 8 == 0 && aligned16(a.x) &&
                      aligned16(a.w.data);
  if (!vector) {
    const dim3 grid(static_cast<unsigned>((a.rows_per_batch + kWarps - 1) / kWarps), static_cast<unsigned>(batch));
    launch_pdl(w8a16_scalar_kernel<X>, grid, kWarps * 32, 0, as_stream(stream), a);
    return launch_status("fp8_linear_w8a16 (scalar)");
  }
  if (a.M == 1) return launch_w8a16<X, 1>(a, batch, stream);
  if (a.M == 2) return launch_w8a16<X, 2>(a, batch, stream);
  if (a.M <= 4) return launch_w8a16<X, 4>(a, batch, stream);
  if (a.M <= 8) return launch_w8a16<X, 8>(a, batch, stream);
  return launch_w8a16<X, 16>(a, batch, stream);
}

// e4m3 byte of v, rounded to nearest even and saturated to +-448.
__device__ __forceinline__ uint8_t to_e4m3(float v) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

// The power of two at or above t > 0 (exact: frexp splits t = f * 2^e, f in [0.5, 1)).
__device__ __forceinline__ float pow2_at_or_above(float t) {
  int e = 0;
  const float f = frexpf(t, &e);
  return f == 0.5f ? t : ldexpf(1.0f, e);
}

// One warp per (row, 128-column block); each lane 4 consecutive columns.
__global__ void quantize_rows_kernel(const __nv_bfloat16* x, int64_t M, int64_t K, int64_t ldx, bool pow2, uint8_t* q,
                                     float* scales, int64_t scale_ld) {
  pdl_sync();
  const int lane = threadIdx.x & 31;
  const int64_t task = int64_t{blockIdx.x} * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int64_t blocks = (K + kFp8BlockCols - 1) / kFp8BlockCols;
  if (task >= M * blocks) return;
  const int64_t m = task / blocks, kb = task - m * blocks, k = kb * kFp8BlockCols + lane * 4;
  float v[4] = {0.f, 0.f, 0.f, 0.f};
  if (k < K) {  // K is a multiple of 16, so 4 columns are all in or all out
    const uint2 raw = *reinterpret_cast<const uint2*>(x + m * ldx + k);
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
    const float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
    v[0] = a.x;
    v[1] = a.y;
    v[2] = b.x;
    v[3] = b.y;
  }
  const float amax = warp_max(fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3]))));
  float s = amax > 0.f ? amax / kE4m3Max : 1.0f;
  if (pow2 && amax > 0.f) s = pow2_at_or_above(s);
  if (k < K) {
    uint32_t packed = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) packed |= uint32_t{to_e4m3(__fdiv_rn(v[i], s))} << (8 * i);
    *reinterpret_cast<uint32_t*>(q + m * K + k) = packed;
  }
  if (lane == 0) scales[kb * scale_ld + m] = s;
}

__device__ __forceinline__ float e2m1_value(uint32_t nibble) {
  const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = mag[nibble & 7u];
  return (nibble & 8u) ? -v : v;
}

// One warp per (row, 128-column block), a lane 4 columns (2 packed bytes).
__global__ void reencode_fp4_kernel(const uint8_t* packed, const uint8_t* ue8m0, int64_t rows, int64_t cols,
                                    uint8_t* e4m3, float* scales, unsigned long long* inexact) {
  pdl_sync();
  const int lane = threadIdx.x & 31;
  const int64_t task = int64_t{blockIdx.x} * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int64_t blocks = (cols + kFp8BlockCols - 1) / kFp8BlockCols, groups = (cols + 31) / 32;
  if (task >= rows * blocks) return;
  const int64_t r = task / blocks, kb = task - r * blocks, k0 = kb * kFp8BlockCols, k = k0 + lane * 4;
  const int64_t n = cols - k0 < kFp8BlockCols ? cols - k0 : kFp8BlockCols;
  // The block's sub-scales: lanes 0..3 read one group each.
  int own = 0;
  bool nan = false;
  if (lane < 4 && lane * 32 < n) {
    own = ue8m0[r * groups + k0 / 32 + lane];
    nan = own == 0xff;
  }
  int top = own;
  for (int o = 16; o > 0; o >>= 1) top = max(top, __shfl_xor_sync(0xffffffffu, top, o));
  bool bad = __any_sync(0xffffffffu, nan);
  const int my_group = k < cols ? ue8m0[r * groups + k / 32] : 0;
  uint32_t out = 0;
  if (k < cols) {
    const uint16_t two = *reinterpret_cast<const uint16_t*>(packed + r * (cols / 2) + k / 2);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t nibble = (two >> (4 * i)) & 0xfu;
      const float v = ldexpf(e2m1_value(nibble), my_group - top + 6);
      const uint8_t b = static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_NOSAT, __NV_E4M3));
      if (e4m3_value(b) != v || (b & 0x7f) == 0x7f) bad = true;
      out |= uint32_t{b} << (8 * i);
    }
    *reinterpret_cast<uint32_t*>(e4m3 + r * cols + k) = out;
  }
  bad = __any_sync(0xffffffffu, bad);
  if (lane == 0) {
    scales[kb * rows + r] = ldexpf(1.0f, top - 127 - 6);
    if (bad) atomicMin(inexact, static_cast<unsigned long long>(task));
  }
}

// A thread per 16 elements of a row (cols a multiple of 16).
__global__ void dequantize_kernel(Fp8Matrix w, __nv_bfloat16* out) {
  pdl_sync();
  const int64_t chunks = w.cols / kChunk, t = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= w.rows * chunks) return;
  const int64_t r = t / chunks, k = (t - r * chunks) * kChunk;
  float f[kChunk];
  e4m3x16_to_f32(*reinterpret_cast<const uint4*>(w.data + r * w.cols + k), f);
  const float s = w.scale[(r / w.block_rows) * w.scale_row_stride + (k / kFp8BlockCols) * w.scale_col_stride];
  uint4 packed[2];
  auto* h = reinterpret_cast<__nv_bfloat162*>(packed);
#pragma unroll
  for (int i = 0; i < kChunk / 2; ++i) h[i] = __floats2bfloat162_rn(f[2 * i] * s, f[2 * i + 1] * s);
  auto* dst = reinterpret_cast<uint4*>(out + r * w.cols + k);
  dst[0] = packed[0];
  dst[1] = packed[1];
}

__global__ void random_fp8_kernel(uint8_t* codes, int64_t n, uint64_t seed) {
  pdl_sync();
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const uint32_t sign = static_cast<uint32_t>(z & 1u) << 7, exp = static_cast<uint32_t>((z >> 1) % 9u),
                 mant = static_cast<uint32_t>((z >> 8) & 7u);
  codes[i] = static_cast<uint8_t>(sign | (exp << 3) | mant);
}

// Any width or alignment: a thread per element.
__global__ void dequantize_scalar_kernel(Fp8Matrix w, __nv_bfloat16* out) {
  pdl_sync();
  const int64_t t = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= w.rows * w.cols) return;
  const int64_t r = t / w.cols, k = t - r * w.cols;
  const float s = w.scale[(r / w.block_rows) * w.scale_row_stride + (k / kFp8BlockCols) * w.scale_col_stride];
  out[t] = __float2bfloat16(e4m3_value(w.data[t]) * s);
}

__global__ void ue8m0_kernel(const uint8_t* in, int64_t n, float* out) {
  pdl_sync();
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] == 0xff ? __int_as_float(0x7fc00000) : ldexpf(1.0f, static_cast<int>(in[i]) - 127);
}

}  // namespace

Status fp8_linear_w8a16(const void* x, DType x_type, int64_t M, int64_t ldx, int64_t x_stride, const Fp8Matrix& w,
                        int64_t batch, float* y, int64_t ldy, int64_t y_stride, void* stream, bool cuda_cores) {
  if (M == 0) return Status::ok();
  if (M < 0 || batch < 1 || w.rows % batch != 0 || w.block_rows < 1)
    return Status::invalid_argument("fp8_linear_w8a16: rows " + std::to_string(w.rows) + " do not split into " +
                                    std::to_string(batch) + " groups");
  if (x_type == DType::kF32)
    return run_w8a16(W8A16Args<float>{static_cast<const float*>(x), M, ldx, x_stride, w, w.rows / batch, y, ldy,
                                      y_stride},
                     batch, cuda_cores, stream);
  return run_w8a16(W8A16Args<__nv_bfloat16>{static_cast<const __nv_bfloat16*>(x), M, ldx, x_stride, w,
                                            w.rows / batch, y, ldy, y_stride},
                   batch, cuda_cores, stream);
}

Status quantize_rows_fp8(const void* x, int64_t M, int64_t K, int64_t ldx, bool pow2_scales, uint8_t* q, float* scales,
                         int64_t scale_ld, void* stream) {
  if (M == 0) return Status::ok();
  if (M < 0 || K % 16 != 0 || ldx % 4 != 0 || scale_ld < M)
    return Status::invalid_argument("quantize_rows_fp8: K " + std::to_string(K) + " must be a multiple of 16");
  const int64_t tasks = M * ((K + kFp8BlockCols - 1) / kFp8BlockCols);
  constexpr int kThreads = 256;
  const unsigned grid = static_cast<unsigned>((tasks + kThreads / 32 - 1) / (kThreads / 32));
  launch_pdl(quantize_rows_kernel, grid, kThreads, 0, as_stream(stream), static_cast<const __nv_bfloat16*>(x), M, K, ldx,
                                                                 pow2_scales, q, scales, scale_ld);
  return launch_status("quantize_rows_fp8");
}

Status reencode_fp4_to_fp8(const uint8_t* packed, const uint8_t* ue8m0, int64_t rows, int64_t cols, uint8_t* e4m3,
                           float* scales, int64_t* inexact, void* stream) {
  if (rows == 0) return Status::ok();
  if (rows < 0 || cols % 32 != 0 || cols % 4 != 0)
    return Status::invalid_argument("reencode_fp4_to_fp8: cols " + std::to_string(cols) + " must be a multiple of 32");
  static_assert(sizeof(int64_t) == sizeof(unsigned long long));
  const int64_t tasks = rows * ((cols + kFp8BlockCols - 1) / kFp8BlockCols);
  constexpr int kThreads = 256;
  const unsigned grid = static_cast<unsigned>((tasks + kThreads / 32 - 1) / (kThreads / 32));
  launch_pdl(reencode_fp4_kernel, grid, kThreads, 0, as_stream(stream), packed, ue8m0, rows, cols, e4m3, scales,
                                                                reinterpret_cast<unsigned long long*>(inexact));
  return launch_status("reencode_fp4_to_fp8");
}

Status dequantize_fp8_to_bf16(const Fp8Matrix& w, void* out, void* stream) {
  if (w.rows == 0) return Status::ok();
  if (w.cols % kChunk != 0 || !aligned16(w.data) || !aligned16(out)) {
    const int64_t n = w.rows * w.cols;
    launch_pdl(dequantize_scalar_kernel, static_cast<unsigned>((n + 255) / 256), 256, 0, as_stream(stream), w, static_cast<__nv_bfloat16*>(out));
    return launch_status("dequantize_fp8_to_bf16 (scalar)");
  }
  const int64_t threads = w.rows * (w.cols / kChunk);
  launch_pdl(dequantize_kernel, static_cast<unsigned>((threads + 255) / 256), 256, 0, as_stream(stream), w, static_cast<__nv_bfloat16*>(out));
  return launch_status("dequantize_fp8_to_bf16");
}

Status fill_random_fp8(uint8_t* codes, int64_t n, uint64_t seed, void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(random_fp8_kernel, static_cast<unsigned>((n + 255) / 256), 256, 0, as_stream(stream), codes, n, seed);
  return launch_status("fill_random_fp8");
}

Status ue8m0_to_f32(const uint8_t* in, int64_t n, float* out, void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(ue8m0_kernel, static_cast<unsigned>((n + 255) / 256), 256, 0, as_stream(stream), in, n, out);
  return launch_status("ue8m0_to_f32");
}

}  // namespace di::kernels::cuda
