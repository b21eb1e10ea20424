// Kernel of flash_attention.h. Four warps; warp w owns query rows 16w..16w+15 of the tile, so
// after the K/V tile is in shared memory each warp's softmax and P V work touch only its own
// rows and need only __syncwarp. The running output O lives in shared memory (fp32) because a
// WMMA accumulator's element layout is opaque: rows are rescaled there, then loaded back as the
// accumulator of the next P V product.
#include <mma.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/flash_attention.h"

namespace di::kernels::cuda {
namespace {

using namespace nvcuda;
constexpr int kTile = 64;  // query rows and keys per tile
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;

struct FlashSmem {
  int hd;
  __host__ __device__ int ldh() const { return hd + 8; }   // bf16 rows: Q, K, V
  __host__ __device__ int lds() const { return kTile + 4; }  // fp32 scores
  __host__ __device__ int ldp() const { return kTile + 8; }  // bf16 probabilities
  __host__ __device__ int ldo() const { return hd + 4; }   // fp32 output
  __host__ __device__ size_t q() const { return 0; }
  __host__ __device__ size_t k() const { return q() + size_t(kTile) * ldh() * 2; }
  __host__ __device__ size_t v() const { return k() + size_t(kTile) * ldh() * 2; }
  __host__ __device__ size_t s() const { return v() + size_t(kTile) * ldh() * 2; }
  __host__ __device__ size_t p() const { return s() + size_t(kTile) * lds() * 4; }
  __host__ __device__ size_t o() const { return p() + size_t(kTile) * ldp() * 2; }
  __host__ __device__ size_t stats() const { return o() + size_t(kTile) * ldo() * 4; }  // m, l, alpha
  __host__ __device__ size_t bytes() const { return stats() + size_t(3) * kTile * 4; }
};

__global__ void __launch_bounds__(kThreads) flash_attention_kernel(const __nv_bfloat16* q, int64_t q_stride,
                                                                    __nv_bfloat16* out, const AttentionTile* tiles,
                                                                    const CacheView* seqs, int32_t layer,
                                                                    AttentionShape shape) {
  extern __shared__ __align__(128) uint8_t smem[];
  const AttentionTile tile = tiles[blockIdx.x];
  const int h = blockIdx.y;
  const int group = shape.num_heads / shape.num_kv_heads;
  const int kvh = h / group;
  const CacheView d = seqs[tile.seq];
  const int hd = shape.head_dim;
  const FlashSmem L{hd};
  auto* q_s = reinterpret_cast<__nv_bfloat16*>(smem + L.q());
  auto* k_s = reinterpret_cast<__nv_bfloat16*>(smem + L.k());
  auto* v_s = reinterpret_cast<__nv_bfloat16*>(smem + L.v());
  auto* s_s = reinterpret_cast<float*>(smem + L.s());
  auto* p_s = reinterpret_cast<__nv_bfloat16*>(smem + L.p());
  auto* o_s = reinterpret_cast<float*>(smem + L.o());
  float* m_s = reinterpret_cast<float*>(smem + L.stats());
  float* l_s = m_s + kTile;
  float* a_s = l_s + kTile;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int ldh = L.ldh(), lds = L.lds(), ldp = L.ldp(), ldo = L.ldo();
  const int64_t width = int64_t{shape.num_kv_heads} * hd;
  const int vec = hd / 8;  // 16-byte vectors per row

  // Q tile (rows past num_rows zero), O = 0, stats.
  for (int e = threadIdx.x; e < kTile * vec; e += kThreads) {
    const int r = e / vec, c = (e % vec) * 8;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (r < tile.num_rows)
      val = *reinterpret_cast<const uint4*>(q + (tile.row0 + r) * q_stride + int64_t{h} * hd + c);
    *reinterpret_cast<uint4*>(q_s + r * ldh + c) = val;
  }
  for (int e = threadIdx.x; e < kTile * hd; e += kThreads) o_s[(e / hd) * ldo + e % hd] = 0.f;
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    m_s[r] = -INFINITY;
    l_s[r] = 0.f;
  }
  const int64_t last_pos = int64_t{tile.pos0} + tile.num_rows - 1;
  const int row0 = warp * 16;

  for (int64_t k0 = 0; k0 <= last_pos; k0 += kTile) {
    const int nk = static_cast<int>(last_pos + 1 - k0 < kTile ? last_pos + 1 - k0 : kTile);
    __syncthreads();  // previous K/V no longer read
    for (int e = threadIdx.x; e < kTile * vec; e += kThreads) {
      const int j = e / vec, c = (e % vec) * 8;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
      if (j < nk) {
        const auto* ent = cache_entry<const __nv_bfloat16>(d, layer, k0 + j);
        kv = *reinterpret_cast<const uint4*>(ent + int64_t{kvh} * hd + c);
        vv = *reinterpret_cast<const uint4*>(ent + width + int64_t{kvh} * hd + c);
      }
      *reinterpret_cast<uint4*>(k_s + j * ldh + c) = kv;
      *reinterpret_cast<uint4*>(v_s + j * ldh + c) = vv;
    }
    __syncthreads();
    // S[row0..+16, 0..64) = Q K^T
    for (int n = 0; n < kTile / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
      for (int kk = 0; kk < hd; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
        wmma::load_matrix_sync(a, q_s + row0 * ldh + kk, ldh);
        wmma::load_matrix_sync(b, k_s + (n * 16) * ldh + kk, ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(s_s + row0 * lds + n * 16, acc, lds, wmma::mem_row_major);
    }
    __syncwarp();
    // Online softmax over the warp's 16 rows; each lane holds keys lane and lane + 32.
    for (int rr = 0; rr < 16; ++rr) {
      const int r = row0 + rr;
      const int64_t pos = int64_t{tile.pos0} + r;
      float s0 = s_s[r * lds + lane] * shape.scale, s1 = s_s[r * lds + lane + 32] * shape.scale;
      if (r >= tile.num_rows || lane >= nk || k0 + lane > pos) s0 = -INFINITY;
      if (r >= tile.num_rows || lane + 32 >= nk || k0 + lane + 32 > pos) s1 = -INFINITY;
      const float m_old = m_s[r];
      const float m_new = fmaxf(m_old, warp_max(fmaxf(s0, s1)));
      const float p0 = s0 == -INFINITY ? 0.f : __expf(s0 - m_new);
      const float p1 = s1 == -INFINITY ? 0.f : __expf(s1 - m_new);
      const float sum = warp_sum(p0 + p1);
      p_s[r * ldp + lane] = __float2bfloat16(p0);
      p_s[r * ldp + lane + 32] = __float2bfloat16(p1);
      if (lane == 0) {
        const float alpha = m_old == -INFINITY ? (m_new == -INFINITY ? 1.f : 0.f) : __expf(m_old - m_new);
        a_s[r] = alpha;
        l_s[r] = l_s[r] * alpha + sum;
        m_s[r] = m_new;
      }
    }
    __syncwarp();
    for (int e = lane; e < 16 * hd; e += 32) {
      const int r = row0 + e / hd;
      o_s[r * ldo + e % hd] *= a_s[r];
    }
    __syncwarp();
    // O[row0..+16, :] += P V
    for (int n = 0; n < hd / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, o_s + row0 * ldo + n * 16, ldo, wmma::mem_row_major);
      for (int kk = 0; kk < kTile; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
        wmma::load_matrix_sync(a, p_s + row0 * ldp + kk, ldp);
        wmma::load_matrix_sync(b, v_s + kk * ldh + n * 16, ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(o_s + row0 * ldo + n * 16, acc, ldo, wmma::mem_row_major);
    }
    __syncwarp();
  }
  __syncthreads();
  const int64_t out_stride = int64_t{shape.num_heads} * hd;
  for (int e = threadIdx.x; e < tile.num_rows * hd; e += kThreads) {
    const int r = e / hd, c = e % hd;
    out[(tile.row0 + r) * out_stride + int64_t{h} * hd + c] = __float2bfloat16(o_s[r * ldo + c] / l_s[r]);
  }
}

}  // namespace

bool flash_attention_supports(const AttentionShape& shape, DType dtype) {
  return dtype == DType::kBF16 && shape.head_dim % 16 == 0 && shape.head_dim <= 256 && shape.num_kv_heads > 0 &&
         shape.num_heads % shape.num_kv_heads == 0;
}

void append_flash_tiles(int32_t seq, int32_t row0, int32_t pos0, int32_t num_tokens, std::vector<AttentionTile>& tiles) {
  for (int32_t t = 0; t < num_tokens; t += kFlashTileTokens)
    tiles.push_back({seq, row0 + t, std::min(kFlashTileTokens, num_tokens - t), pos0 + t});
}

Status flash_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                       const CacheView* seqs, int32_t layer, const AttentionShape& shape, void* stream) {
  if (num_tiles <= 0) return Status::ok();
  if (!flash_attention_supports(shape, DType::kBF16))
    return Status::invalid_argument("flash_attention: needs head_dim a multiple of 16 up to 256");
  const size_t smem = FlashSmem{shape.head_dim}.bytes();
  DI_RETURN_IF_ERROR(cuda_status(cudaFuncSetAttribute(flash_attention_kernel,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      static_cast<int>(smem)),
                                 "flash_attention smem"));
  const dim3 grid(static_cast<unsigned>(num_tiles), static_cast<unsigned>(shape.num_heads));
  flash_attention_kernel<<<grid, kThreads, smem, as_stream(stream)>>>(
      static_cast<const __nv_bfloat16*>(q), q_stride, static_cast<__nv_bfloat16*>(out), tiles, seqs, layer, shape);
  return launch_status("flash_attention");
}

}  // namespace di::kernels::cuda
