// sink_attention_varlen: see sink_attention_varlen.h. A block per (row, group of heads, key
// range): its warps are the group's heads, which share every key (MQA), so a tile of keys is
// loaded into shared memory once and read by each head's warp, the next tile arriving while
// this one is reduced. A lane owns channels lane, lane + 32, ... of its head; each warp keeps an
// online softmax (running max, sum and weighted values) over the tiles. With several key ranges
// a second kernel merges the ranges and the sink. The tensor-core kernel is
// sink_attention_mma.cuh.
#include <algorithm>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mma_tile.cuh"
#include "kernels/cuda/sink_attention_keys.cuh"
#include "kernels/cuda/sink_attention_mma.cuh"
#include "kernels/cuda/sink_attention_varlen.h"
#include "kernels/cuda/split_kv.cuh"

namespace di::kernels::cuda {
namespace {

constexpr int kKeyTile = 16;
constexpr int kMaxHeadsPerBlock = 8;
constexpr int kMaxHeadDim = 512;

int heads_per_block(int32_t num_heads) {
  for (int h = kMaxHeadsPerBlock; h > 1; --h)
    if (num_heads % h == 0) return h;
  return 1;
}

// Tiles are double-buffered: while the warps reduce tile i, tile i + 1 arrives by cp.async (16-byte
// copies, so head_dim % 4 == 0; other widths load each tile synchronously).
template <int CH>
__global__ void attention_kernel(SinkAttentionVarlenArgs a, int hpb) {
  pdl_sync();
  extern __shared__ float tiles[];  // 2 x [kKeyTile][head_dim]
  __shared__ const float* key_ptr[2][kKeyTile];
  const int64_t row = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int h = blockIdx.y * hpb + warp;
  const int hd = a.head_dim, nh = a.num_heads;
  const bool async = hd % 4 == 0;
  const SinkRowKeys k = sink_row_keys(a, row);
  if (k.seq < 0) {
    if (a.splits == 1)
      for (int i = 0; i < CH; ++i)
        if (lane + 32 * i < hd) a.out[(row * nh + h) * hd + lane + 32 * i] = 0.f;
    return;  // the merge kernel zeroes split rows
  }
  const int64_t per = (k.num_keys + a.splits - 1) / a.splits;
  const int64_t begin = blockIdx.z * per, end = begin + per < k.num_keys ? begin + per : k.num_keys;

  float q[CH], acc[CH];
  for (int i = 0; i < CH; ++i) {
    const int c = lane + 32 * i;
    q[i] = c < hd ? a.q[(row * nh + h) * hd + c] : 0.f;
    acc[i] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  // Pointers of tile `t0`'s keys into key_ptr[buf] (threads below the tile size), then, once
  // the block has synced, its rows into tiles[buf].
  auto pointers = [&](int64_t t0, int buf) {
    const int nt = end - t0 < kKeyTile ? static_cast<int>(end - t0) : kKeyTile;
    if (threadIdx.x < nt) key_ptr[buf][threadIdx.x] = sink_key_row(a, k, row, t0 + threadIdx.x);
    return nt;
  };
  auto fetch = [&](int nt, int buf) {
    float* dst = tiles + buf * kKeyTile * hd;
    if (async) {
      const int v = hd / 4;
      for (int idx = threadIdx.x; idx < nt * v; idx += blockDim.x) {
        const int j = idx / v, c = idx - j * v;
        cp_async16(dst + j * hd + 4 * c, key_ptr[buf][j] + 4 * c);
      }
    } else {
      for (int idx = threadIdx.x; idx < nt * hd; idx += blockDim.x) {
        const int j = idx / hd, c = idx - j * hd;
        dst[idx] = key_ptr[buf][j][c];
      }
    }
    cp_async_commit();  // an empty group when nothing was copied asynchronously
  };
  int nt_next = 0;
  if (begin < end) {
    nt_next = pointers(begin, 0);
    __syncthreads();
    fetch(nt_next, 0);
  }
  int buf = 0;
  for (int64_t t0 = begin; t0 < end; t0 += kKeyTile, buf ^= 1) {
    const int nt = nt_next;
    const int64_t t1 = t0 + kKeyTile;
    if (t1 < end) nt_next = pointers(t1, buf ^ 1);
    __syncthreads();  // key_ptr[buf ^ 1] is set, and every warp is done with tiles[buf ^ 1]
    if (t1 < end) {
      fetch(nt_next, buf ^ 1);
    } else {
      cp_async_commit();
    }
    cp_async_wait<1>();  // tile t0 has landed
    __syncthreads();
    const float* tile = tiles + buf * kKeyTile * hd;
    float logit[kKeyTile];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kKeyTile; ++j) {
      if (j < nt) {
        float d = 0.f;
        for (int i = 0; i < CH; ++i)
          if (lane + 32 * i < hd) d += q[i] * tile[j * hd + lane + 32 * i];
        logit[j] = warp_sum(d) * a.scale;
        tile_max = fmaxf(tile_max, logit[j]);
      }
    }
    const float m_new = fmaxf(m, tile_max);
    const float corr = expf(m - m_new);  // 0 on the first tile (m = -inf)
    l *= corr;
    for (int i = 0; i < CH; ++i) acc[i] *= corr;
#pragma unroll
    for (int j = 0; j < kKeyTile; ++j) {
      if (j < nt) {
        const float p = expf(logit[j] - m_new);
        l += p;
        for (int i = 0; i < CH; ++i)
          if (lane + 32 * i < hd) acc[i] += p * tile[j * hd + lane + 32 * i];
      }
    }
    m = m_new;
  }
  if (a.splits == 1) {
    const float sink = a.sinks ? a.sinks[h] : -INFINITY;
    const float denom = l + expf(sink - m);
    for (int i = 0; i < CH; ++i)
      if (lane + 32 * i < hd) a.out[(row * nh + h) * hd + lane + 32 * i] = acc[i] / denom;
    return;
  }
  float* part = a.partial + ((blockIdx.z * int64_t{a.batch.num_tokens} + row) * nh + h) * (hd + 2);
  if (lane == 0) {
    part[0] = m;
    part[1] = l;
  }
  for (int i = 0; i < CH; ++i)
    if (lane + 32 * i < hd) part[2 + lane + 32 * i] = acc[i];
}

// One block per (row, head): the key ranges' partial sums rescaled to a common max, plus the sink.
__global__ void merge_kernel(SinkAttentionVarlenArgs a) {
  pdl_sync();
  const int64_t row = blockIdx.x;
  const int h = blockIdx.y, hd = a.head_dim, nh = a.num_heads;
  float* o = a.out + (row * nh + h) * hd;
  const int c0 = static_cast<int>(blockIdx.z) * kMergeChannels, c1 = min(hd, c0 + kMergeChannels);
  if (a.batch.seq[row] < 0) {
    for (int c = c0 + threadIdx.x; c < c1; c += blockDim.x) o[c] = 0.f;
    return;
  }
  merge_kv_splits(a.partial + (row * nh + h) * (hd + 2), int64_t{a.batch.num_tokens} * nh * (hd + 2), a.splits, hd,
                  a.sinks ? a.sinks[h] : -INFINITY, o, c0, c1);
}

template <int CH>
Status launch(const SinkAttentionVarlenArgs& a, void* stream) {
  const int hpb = heads_per_block(a.num_heads);
  const dim3 grid(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.num_heads / hpb),
                  static_cast<unsigned>(a.splits));
  const size_t smem = 2 * kKeyTile * a.head_dim * sizeof(float);
  static const bool wide_smem = [] {  // two tiles of 512-wide keys take 64 KiB
    return cudaFuncSetAttribute(attention_kernel<CH>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(2 * kKeyTile * kMaxHeadDim * sizeof(float))) == cudaSuccess;
  }();
  if (!wide_smem && smem > 48 * 1024)
    return Status::device("sink_attention_varlen: 64 KiB of shared memory per block is not available");
  launch_pdl(attention_kernel<CH>, grid, hpb * 32, smem, as_stream(stream), a, hpb);
  DI_RETURN_IF_ERROR(launch_status("sink_attention_varlen"));
  if (a.splits == 1) return Status::ok();
  const dim3 mgrid(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.num_heads),
                   static_cast<unsigned>((a.head_dim + kMergeChannels - 1) / kMergeChannels));
  launch_pdl(merge_kernel, mgrid, kMergeThreads, 0, as_stream(stream), a);
  return launch_status("sink_attention_varlen merge");
}

template <int D>
Status launch_mma(const SinkAttentionVarlenArgs& a, void* stream) {
  constexpr size_t smem = sink_mma::Layout<D>::bytes;
  static const bool smem_ok = cudaFuncSetAttribute(sink_mma::attention_kernel<D>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(smem)) == cudaSuccess;
  if (!smem_ok) return Status::device("sink_attention_varlen: the tensor-core kernel's shared memory is not available");
  const dim3 grid(static_cast<unsigned>(a.batch.num_tokens),
                  static_cast<unsigned>((a.num_heads + sink_mma::kHeads - 1) / sink_mma::kHeads));
  launch_pdl(sink_mma::attention_kernel<D>, grid, sink_mma::kThreads, smem, as_stream(stream), a);
  return launch_status("sink_attention_varlen (tensor cores)");
}

}  // namespace

int32_t sink_attention_varlen_splits(int64_t rows, int32_t num_heads, int64_t max_keys) {
  if (rows <= 0 || num_heads <= 0) return 1;
  const int64_t blocks = rows * (num_heads / heads_per_block(num_heads));
  return kv_splits_for(blocks, max_keys / 16, 16);  // 16 keys: one tile
}

Status sink_attention_varlen(const SinkAttentionVarlenArgs& a, void* stream) {
  if (a.batch.num_tokens <= 0) return Status::ok();
  if (a.head_dim <= 0 || a.head_dim > kMaxHeadDim || a.num_heads <= 0 || a.window <= 0)
    return Status::invalid_argument("sink_attention_varlen: head_dim must be in [1, 512], num_heads and window > 0");
  if (a.entry_group >= 0 && !a.selected && a.compress_rate <= 0)
    return Status::invalid_argument("sink_attention_varlen: compressed entries need a compress_rate or a selection");
  if (a.splits < 1 || a.splits > kMaxKvSplits || (a.splits > 1 && !a.partial))
    return Status::invalid_argument("sink_attention_varlen: splits in [1, 256]; more than 1 needs a partial buffer");
  if (a.tensor_cores && a.splits == 1) {
    if (a.head_dim == 512) return launch_mma<512>(a, stream);
    if (a.head_dim == 256) return launch_mma<256>(a, stream);
    if (a.head_dim == 128) return launch_mma<128>(a, stream);
    if (a.head_dim == 64) return launch_mma<64>(a, stream);
  }
  const int ch = (a.head_dim + 31) / 32;
  if (ch <= 1) return launch<1>(a, stream);
  if (ch <= 2) return launch<2>(a, stream);
  if (ch <= 4) return launch<4>(a, stream);
  if (ch <= 8) return launch<8>(a, stream);
  return launch<16>(a, stream);
}

}  // namespace di::kernels::cuda
