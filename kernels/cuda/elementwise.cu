// Kernels of elementwise.h. One block per row for the row-wise ops (norms), a flat grid-stride
// loop for the rest; all math in fp32, storage in T (float or bf16).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/elementwise.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;


template <typename T>
__global__ void embedding_kernel(const int32_t* ids, const T* table, int64_t dim, T* out) {
  pdl_sync();
  const int64_t row = blockIdx.x;
  const T* src = table + static_cast<int64_t>(ids[row]) * dim;
  T* dst = out + row * dim;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = src[i];
}

template <typename T>
__global__ void rms_norm_kernel(const T* x, const T* w, T* y, int64_t heads, int64_t dim, int64_t stride,
                                float eps) {
  pdl_sync();
  const int64_t off = (blockIdx.x / heads) * stride + (blockIdx.x % heads) * dim;
  const T* xr = x + off;
  T* yr = y + off;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = to_f32(xr[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    yr[i] = from_f32<T>(to_f32(from_f32<T>(to_f32(xr[i]) * inv)) * (w ? to_f32(w[i]) : 1.f));
}

// rms_norm_kernel<float> for one vector per row, also writing the result rounded to bf16.
__global__ void rms_norm_bf16_kernel(const float* x, const float* w, float* y, __nv_bfloat16* y16, int64_t dim,
                                     float eps) {
  pdl_sync();
  const float* xr = x + blockIdx.x * dim;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) ss += xr[i] * xr[i];
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(dim) + eps);  // syncs: x is read before y aliases it
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = xr[i] * inv * (w ? w[i] : 1.f);
    y[blockIdx.x * dim + i] = v;
    y16[blockIdx.x * dim + i] = __float2bfloat16(v);
  }
}

template <typename T>
__global__ void add_rms_norm_kernel(T* res, const T* delta, const T* w, T* y, int64_t dim, float eps) {
  pdl_sync();
  T* rr = res + blockIdx.x * dim;
  const T* dr = delta + blockIdx.x * dim;
  T* yr = y + blockIdx.x * dim;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const T s = from_f32<T>(to_f32(rr[i]) + to_f32(dr[i]));
    rr[i] = s;
    const float v = to_f32(s);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    yr[i] = from_f32<T>(to_f32(from_f32<T>(to_f32(rr[i]) * inv)) * to_f32(w[i]));
}

template <typename T>
__global__ void add_bias_kernel(T* x, const T* b, int64_t rows, int64_t cols, int64_t stride) {
  pdl_sync();
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    T* p = x + r * stride + c;
    *p = from_f32<T>(to_f32(*p) + to_f32(b[c]));
  }
}

template <typename T>
__global__ void silu_and_mul_kernel(const T* gu, int64_t rows, int64_t inter, T* out) {
  pdl_sync();
  const int64_t n = rows * inter;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / inter, c = i % inter;
    const float g = to_f32(gu[r * 2 * inter + c]), u = to_f32(gu[r * 2 * inter + inter + c]);
    // silu rounded to T first, as a framework applying act_fn then multiplying does
    const float s = to_f32(from_f32<T>(g / (1.f + expf(-g))));
    out[i] = from_f32<T>(s * u);
  }
}

template <typename T>
__global__ void rope_half_kernel(T* x, int64_t heads, int64_t head_dim, int64_t stride, const int64_t* positions,
                                 const float* inv_freq, int64_t rot_dim, float scaling) {
  pdl_sync();
  const int64_t row = blockIdx.x;
  const int64_t half = rot_dim / 2;
  const float pos = static_cast<float>(positions[row]);
  T* xr = x + row * stride;
  for (int64_t k = threadIdx.x; k < heads * half; k += blockDim.x) {
    const int64_t h = k / half, i = k % half;
    float s, c;
    sincosf(inv_freq[i] * pos, &s, &c);
    // cos/sin are rounded to T like a framework's cached rotary tables.
    c = to_f32(from_f32<T>(c * scaling));
    s = to_f32(from_f32<T>(s * scaling));
    T* p = xr + h * head_dim;
    const float a = to_f32(p[i]), b = to_f32(p[i + half]);
    p[i] = from_f32<T>(a * c - b * s);
    p[i + half] = from_f32<T>(b * c + a * s);
  }
}

template <typename T>
__global__ void convert_kernel(const float* in, int64_t n, T* out) {
  pdl_sync();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = from_f32<T>(in[i]);
}

template <typename T>
__global__ void convert_rows_kernel(const float* in, int64_t rows, int64_t cols, int64_t ld, T* out) {
  pdl_sync();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = from_f32<T>(in[(i / cols) * ld + i % cols]);
}

__device__ __forceinline__ uint64_t mix64(uint64_t z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fill_uniform_kernel(T* out, int64_t n, float offset, float scale, uint64_t seed) {
  pdl_sync();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t r = mix64(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(i));
    const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    out[i] = from_f32<T>(offset + (2.f * u - 1.f) * scale);
  }
}

}  // namespace

Status embedding(const int32_t* ids, int64_t rows, const void* table, int64_t dim, void* out, DType dtype,
                 void* stream) {
  if (rows <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(embedding_kernel<T>, rows, kThreads, 0, as_stream(stream), ids, static_cast<const T*>(table), dim,
                                                                  static_cast<T*>(out));
    return launch_status("embedding");
  });
}

Status rms_norm(const void* x, const void* weight, void* y, int64_t rows, int64_t heads, int64_t dim,
                int64_t stride, float eps, DType dtype, void* stream) {
  if (rows <= 0) return Status::ok();
  if (heads < 1 || dim < 1) return Status::invalid_argument("rms_norm: heads and dim must be >= 1");
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(rms_norm_kernel<T>, rows * heads, dim >= 4096 ? 1024 : dim >= 1024 ? 512 : 128, 0, as_stream(stream), static_cast<const T*>(x), static_cast<const T*>(weight), static_cast<T*>(y), heads, dim, stride, eps);
    return launch_status("rms_norm");
  });
}

Status rms_norm_with_bf16(const float* x, const float* weight, float* y, void* y16, int64_t rows, int64_t dim,
                          float eps, void* stream) {
  if (rows <= 0) return Status::ok();
  if (dim < 1) return Status::invalid_argument("rms_norm_with_bf16: dim must be >= 1");
  launch_pdl(rms_norm_bf16_kernel, rows, dim >= 4096 ? 1024 : dim >= 1024 ? 512 : 128, 0, as_stream(stream), x, weight, y, static_cast<__nv_bfloat16*>(y16), dim, eps);
  return launch_status("rms_norm_with_bf16");
}

Status add_rms_norm(void* residual, const void* delta, const void* weight, void* y, int64_t rows, int64_t dim,
                    float eps, DType dtype, void* stream) {
  if (rows <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(add_rms_norm_kernel<T>, rows, dim >= 1024 ? 512 : 128, 0, as_stream(stream), static_cast<T*>(residual), static_cast<const T*>(delta), static_cast<const T*>(weight), static_cast<T*>(y),
        dim, eps);
    return launch_status("add_rms_norm");
  });
}

Status add_bias(void* x, const void* bias, int64_t rows, int64_t cols, int64_t stride, DType dtype, void* stream) {
  if (rows <= 0 || !bias) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(add_bias_kernel<T>, flat_blocks(rows * cols), kThreads, 0, as_stream(stream), static_cast<T*>(x), static_cast<const T*>(bias), rows, cols, stride);
    return launch_status("add_bias");
  });
}

Status silu_and_mul(const void* gate_up, int64_t rows, int64_t inter, void* out, DType dtype, void* stream) {
  if (rows <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(silu_and_mul_kernel<T>, flat_blocks(rows * inter), kThreads, 0, as_stream(stream), static_cast<const T*>(gate_up), rows, inter, static_cast<T*>(out));
    return launch_status("silu_and_mul");
  });
}

Status rope_half(void* x, int64_t rows, int64_t heads, int64_t head_dim, int64_t stride, const int64_t* positions,
                 const float* inv_freq, int64_t rot_dim, float scaling, DType dtype, void* stream) {
  if (rows <= 0) return Status::ok();
  if (rot_dim <= 0 || rot_dim % 2 || rot_dim > head_dim)
    return Status::invalid_argument("rope_half: rot_dim " + std::to_string(rot_dim) + " must be even and <= head_dim");
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(rope_half_kernel<T>, rows, 128, 0, as_stream(stream), static_cast<T*>(x), heads, head_dim, stride, positions,
                                                             inv_freq, rot_dim, scaling);
    return launch_status("rope_half");
  });
}

Status convert_from_f32(const float* in, int64_t n, void* out, DType dtype, void* stream) {
  if (n <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(convert_kernel<T>, flat_blocks(n), kThreads, 0, as_stream(stream), in, n, static_cast<T*>(out));
    return launch_status("convert_from_f32");
  });
}

Status convert_rows_from_f32(const float* in, int64_t rows, int64_t cols, int64_t ld, void* out, DType dtype,
                             void* stream) {
  if (rows <= 0 || cols <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(convert_rows_kernel<T>, flat_blocks(rows * cols), kThreads, 0, as_stream(stream), in, rows, cols, ld,
                                                                                      static_cast<T*>(out));
    return launch_status("convert_rows_from_f32");
  });
}

Status fill_uniform(void* out, int64_t n, float offset, float scale, uint64_t seed, DType dtype, void* stream) {
  if (n <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    launch_pdl(fill_uniform_kernel<T>, flat_blocks(n), kThreads, 0, as_stream(stream), static_cast<T*>(out), n, offset, scale, seed);
    return launch_status("fill_uniform");
  });
}

}  // namespace di::kernels::cuda
