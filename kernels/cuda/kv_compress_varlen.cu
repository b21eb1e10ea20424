// compress_windows_varlen: see kv_compress_varlen.h. A block per row; rows that close no window
// leave at once. The pooled entry stays in shared memory through the norm and the rope, so it
// is written once. The pooling walks the window's (at most 2 * rate) rows three times per
// channel, as the per-sequence kernel does, so both agree to the last bit.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kv_compress_varlen.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxDim = 1024;

struct RowRef {
  const float* kv;
  const float* gate;
};

struct SeqSpan {
  int32_t seq, start, row0;
};

__device__ __forceinline__ RowRef raw_row(const CompressVarlenArgs& a, const SeqSpan& sp, int64_t width,
                                          int64_t ring, int64_t p) {
  if (p >= sp.start) {
    const int64_t r = sp.row0 + p - sp.start, stride = a.row_stride > 0 ? a.row_stride : width;
    return {a.kv + r * stride, a.gate + r * stride};
  }
  const auto* e = reinterpret_cast<const uint8_t*>(
                      cache_entry(seq_view(a.batch, sp.seq, a.state_group), a.state_layer, p % ring)) +
                  a.state_offset;
  const auto* kv = reinterpret_cast<const float*>(e);
  return {kv, kv + width};
}

__device__ __forceinline__ void slot(const CompressVarlenArgs& a, const SeqSpan& sp, int64_t width, int64_t ring,
                                     int64_t win, int64_t n, int64_t ch, float* logit, float* value) {
  const int64_t m = a.rate, d = a.dim;
  const bool prev = a.overlap && win > 0 && n < m;  // Ca series of the previous window
  const int64_t j = prev ? n : (a.overlap && win > 0 ? n - m : n);
  const int64_t off = prev ? 0 : (a.overlap ? d : 0);
  const RowRef r = raw_row(a, sp, width, ring, (prev ? win - 1 : win) * m + j);
  *logit = r.gate[off + ch] + a.ape[j * width + off + ch];
  *value = r.kv[off + ch];
}

__global__ void compress_varlen_kernel(CompressVarlenArgs a) {
  pdl_sync();
  __shared__ float entry[kMaxDim];
  const int64_t row = blockIdx.x;
  const int32_t seq = a.batch.seq[row];
  if (seq < 0) return;
  const int64_t p = a.batch.pos[row], m = a.rate, d = a.dim;
  if ((p + 1) % m != 0) return;
  const SeqSpan sp{seq, a.batch.seq_start[seq], a.batch.seq_row0[seq]};
  const int64_t width = a.overlap ? 2 * d : d, ring = a.overlap ? 2 * m : m;
  const int64_t win = p / m;
  const int64_t n = (a.overlap && win > 0) ? 2 * m : m;
  float ss = 0.f;
  for (int64_t ch = threadIdx.x; ch < d; ch += blockDim.x) {
    float mx = -INFINITY, l, v;
    for (int64_t k = 0; k < n; ++k) {
      slot(a, sp, width, ring, win, k, ch, &l, &v);
      mx = fmaxf(mx, l);
    }
    float sum = 0.f;
    for (int64_t k = 0; k < n; ++k) {
      slot(a, sp, width, ring, win, k, ch, &l, &v);
      sum += expf(l - mx);
    }
    float acc = 0.f;
    for (int64_t k = 0; k < n; ++k) {
      slot(a, sp, width, ring, win, k, ch, &l, &v);
      acc += v * (expf(l - mx) / sum);
    }
    entry[ch] = acc;
    ss += acc * acc;
  }
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(d) + a.eps);  // block_sum syncs
  for (int64_t ch = threadIdx.x; ch < d; ch += blockDim.x) entry[ch] = entry[ch] * inv * a.norm[ch];
  __syncthreads();
  // Interleaved rope on the last rot_dim channels, at the window's first position; the same
  // rounding steps as rope_interleaved.
  const float pos = static_cast<float>(win * m);
  const int64_t half = a.rot_dim / 2, base = d - a.rot_dim;
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    const float f = __fmul_rn(a.inv_freq[i], pos);
    const float c = static_cast<float>(cos(static_cast<double>(f))) * a.rope_scale;
    const float s = static_cast<float>(sin(static_cast<double>(f))) * a.rope_scale;
    const float x0 = entry[base + 2 * i], x1 = entry[base + 2 * i + 1];
    entry[base + 2 * i] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    entry[base + 2 * i + 1] = __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
  }
  __syncthreads();
  float* dst = cache_entry(seq_view(a.batch, seq, a.entry_group), a.entry_layer, win);
  for (int64_t ch = threadIdx.x; ch < d; ch += blockDim.x) dst[ch] = entry[ch];
}

}  // namespace

Status compress_windows_varlen(const CompressVarlenArgs& a, void* stream) {
  if (a.batch.num_tokens <= 0) return Status::ok();
  if (a.rate <= 0 || a.dim <= 0 || a.dim > kMaxDim || a.rot_dim < 0 || a.rot_dim % 2 || a.rot_dim > a.dim)
    return Status::invalid_argument("compress_windows_varlen: rate > 0, dim in [1, 1024] and an even rot_dim <= dim");
  launch_pdl(compress_varlen_kernel, a.batch.num_tokens, kThreads, 0, as_stream(stream), a);
  return launch_status("compress_windows_varlen");
}

}  // namespace di::kernels::cuda
