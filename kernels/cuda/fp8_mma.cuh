// Tensor-core building blocks for e4m3 weights against bf16 activations (W8A16 on mma.sync):
// the codes become bf16 in registers, exactly (every e4m3 value is a bf16), and feed m16n8k16
// bf16 MMAs with fp32 accumulation, so the dense fp8 product (fp8_linear.cu) and the grouped fp8
// experts (moe_grouped.cu) keep the dequantized reference's arithmetic (w = q * s, x in bf16) while
// streaming half the bytes of bf16 weights. Included only by .cu files.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace di::kernels::cuda {

// d += A (16 x 16, row-major bf16 pairs a0..a3) * B (16 x 8, column pairs b0, b1), fp32.
__device__ __forceinline__ void mma_bf16(float* d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Two e4m3 codes held in bits 8..15 and 24..31 of v (the other bits zero) as a bf16 pair. Moving
// a code's sign, exponent and mantissa bits into bf16's fields gives its value times 2^-120, for
// normals and subnormals alike (both formats' exponent fields then read 2^(e - 127) against the
// code's 2^(e - 7)); one multiply by 2^120 is exact and restores it. Integer and bf16x2 ops only:
// cheaper than the conversion instructions, which run at a quarter of their rate.
__device__ __forceinline__ uint32_t e4m3_pair_to_bf16x2(uint32_t v) {
  uint32_t r = ((v >> 4) & 0x07f007f0u) | (v & 0x80008000u);
  constexpr uint32_t kTwo120 = 0x7b807b80u;  // bf16 2^120 twice
  const __nv_bfloat162 h = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&r),
                                   *reinterpret_cast<const __nv_bfloat162*>(&kTwo120));
  r = *reinterpret_cast<const uint32_t*>(&h);
  return r;
}

// Four e4m3 codes (byte i = code i) as two bf16 pairs: codes 0, 1 and codes 2, 3.
__device__ __forceinline__ void e4m3x4_to_bf16x4(uint32_t q, uint32_t& lo, uint32_t& hi) {
  lo = e4m3_pair_to_bf16x2(__byte_perm(q, 0u, 0x1404));
  hi = e4m3_pair_to_bf16x2(__byte_perm(q, 0u, 0x3424));
}

// One 64-wide k chunk of a warp's 16-row x 8-column tiles: thread (g = lane / 4, t = lane % 4)
// holds physical k 16t..16t+15 of weight rows g (`lo`) and g + 8 (`hi`) as e4m3 codes and, for
// each of kTiles column tiles, of input column g (x[2 * tile], x[2 * tile + 1]: 16 bf16). A dot
// product's terms may be taken in any order, so mma step j reads physical k 16t + 4j ..
// 16t + 4j + 3 as the logical pairs (2t, 2t+1) and (2t+8, 2t+9), the same permutation for weights
// and inputs: four MMAs per tile and 16-byte weight load. d[tile] gets the chunk's sums (d[.][0],
// d[.][1]: row g, columns 2t, 2t+1; d[.][2], d[.][3]: row g + 8).
template <int kTiles>
__device__ __forceinline__ void fp8_mma_chunk(float (*d)[4], const uint4& lo, const uint4& hi, const uint4* x) {
  const uint32_t wl[4] = {lo.x, lo.y, lo.z, lo.w}, wh[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint32_t l0, l1, h0, h1;
    e4m3x4_to_bf16x4(wl[j], l0, l1);
    e4m3x4_to_bf16x4(wh[j], h0, h1);
#pragma unroll
    for (int tile = 0; tile < kTiles; ++tile) {
      const uint4& xa = x[2 * tile + j / 2];
      const uint32_t b0 = (j & 1) ? xa.z : xa.x, b1 = (j & 1) ? xa.w : xa.y;
      mma_bf16(d[tile], l0, h0, l1, h1, b0, b1);
    }
  }
}

}  // namespace di::kernels::cuda
