// compress_windows: see kv_compress.h. One block per window, a thread per channel; each thread
// walks the window's (at most 2 * rate) rows twice: max, then the normalised weighted sum.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kv_compress.h"

namespace di::kernels::cuda {
namespace {

struct RowRef {
  const float* kv;
  const float* gate;
};

__device__ __forceinline__ RowRef raw_row(const CompressArgs& a, int64_t width, int64_t ring, int64_t p) {
  if (p >= a.start_pos) return {a.kv + (p - a.start_pos) * width, a.gate + (p - a.start_pos) * width};
  const auto* e = reinterpret_cast<const uint8_t*>(cache_entry(a.state, a.state_layer, p % ring)) + a.state_offset;
  const auto* kv = reinterpret_cast<const float*>(e);
  return {kv, kv + width};
}

// Slot n of window `win`'s pooling for channel ch: (gate logit + ape, value).
__device__ __forceinline__ void slot(const CompressArgs& a, int64_t width, int64_t ring, int64_t win, int64_t n,
                                     int64_t ch, float* logit, float* value) {
  const int64_t m = a.rate, d = a.dim;
  const bool prev = a.overlap && win > 0 && n < m;  // Ca series of the previous window
  const int64_t j = prev ? n : (a.overlap && win > 0 ? n - m : n);
  const int64_t off = prev ? 0 : (a.overlap ? d : 0);
  const RowRef r = raw_row(a, width, ring, (prev ? win - 1 : win) * m + j);
  *logit = r.gate[off + ch] + a.ape[j * width + off + ch];
  *value = r.kv[off + ch];
}

__global__ void compress_kernel(CompressArgs a) {
  const int64_t m = a.rate, d = a.dim, width = a.overlap ? 2 * d : d, ring = a.overlap ? 2 * m : m;
  const int64_t win = a.start_pos / m + blockIdx.x;
  const int64_t n = (a.overlap && win > 0) ? 2 * m : m;
  for (int64_t ch = threadIdx.x; ch < d; ch += blockDim.x) {
    float mx = -INFINITY, l, v;
    for (int64_t k = 0; k < n; ++k) {
      slot(a, width, ring, win, k, ch, &l, &v);
      mx = fmaxf(mx, l);
    }
    float sum = 0.f;
    for (int64_t k = 0; k < n; ++k) {
      slot(a, width, ring, win, k, ch, &l, &v);
      sum += expf(l - mx);
    }
    float acc = 0.f;
    for (int64_t k = 0; k < n; ++k) {
      slot(a, width, ring, win, k, ch, &l, &v);
      acc += v * (expf(l - mx) / sum);
    }
    a.out[blockIdx.x * d + ch] = acc;
  }
}

}  // namespace

Status compress_windows(const CompressArgs& a, void* stream) {
  if (a.rate <= 0 || a.dim <= 0) return Status::invalid_argument("compress_windows: rate and dim must be > 0");
  const int64_t first = a.start_pos / a.rate, count = (a.start_pos + a.num_tokens) / a.rate - first;
  if (count <= 0) return Status::ok();
  compress_kernel<<<count, 128, 0, as_stream(stream)>>>(a);
  return launch_status("compress_windows");
}

}  // namespace di::kernels::cuda
