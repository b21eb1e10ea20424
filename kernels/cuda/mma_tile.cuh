// The warp-level tensor-core pieces the attention kernels share: bf16 staging stores, 16-byte
// asynchronous copies into shared memory (zero-filling rows past a range), ldmatrix loads of bf16 operand fragments (plain
// and transposed) and the m16n8k16 bf16 mma with fp32 accumulation. Fragment layouts are the PTX
// ISA's: an A tile's rows g and g + 8 (g = lane / 4), columns 2t and 2t + 1 (t = lane % 4).
// Included only by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace di::kernels::cuda {

// Four floats as four bf16 (round to nearest even) in one 8-byte store: operand rows staged for
// ldmatrix.
__device__ __forceinline__ void store_bf16x4(__nv_bfloat16* dst, float4 v) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
  uint2 u;
  u.x = *reinterpret_cast<const uint32_t*>(&lo);
  u.y = *reinterpret_cast<const uint32_t*>(&hi);
  *reinterpret_cast<uint2*>(dst) = u;
}

// fill false: the 16 destination bytes are zeroed and nothing is read (src must still be valid).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool fill = true) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int bytes = fill ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Four 8 x 8 bf16 matrices; lane i gives the address of row i % 8 of matrix i / 8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// d += a (16 x 16, row) * b (16 x 8, col), bf16 in, fp32 accumulation.
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// An online softmax's step for one head after a tile: the correction of what was accumulated
// (0 while the running max is -inf), the running sum with the tile's `sum`, and the new max.
__device__ __forceinline__ void update_softmax_stats(float* m_s, float* l_s, float* alpha_s, int h, float m_old,
                                                     float m_new, float sum) {
  const float alpha = expf(m_old - m_new);
  alpha_s[h] = alpha;
  l_s[h] = l_s[h] * alpha + sum;
  m_s[h] = m_new;
}

// Accumulator tiles rescaled by their rows' corrections: rows g (c0, c1) by `top`, rows g + 8
// (c2, c3) by `bottom`.
template <int N>
__device__ __forceinline__ void scale_rows(float (&acc)[N][4], float top, float bottom) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    acc[j][0] *= top;
    acc[j][1] *= top;
    acc[j][2] *= bottom;
    acc[j][3] *= bottom;
  }
}

}  // namespace di::kernels::cuda
