// causal_attention: see attention.h. Threads split (query, head) pairs; each pair owns its
// output row, so no reduction crosses threads and results do not depend on the thread count.
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/threads.h"

namespace di::kernels::cpu {

void causal_attention(const AttentionShape& s, const float* q, const KvView& k, const KvView& v,
                      float* out) {
  const int64_t L = s.num_queries, nh = s.num_heads, group = s.num_heads / s.num_kv_heads;
  const int64_t keys = s.first_pos + L;
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<float> p(static_cast<size_t>(keys));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t i = t / nh, h = t % nh, g = h / group;
      const int64_t visible = s.first_pos + i + 1;
      const float* qi = q + (i * nh + h) * s.qk_dim;
      float mx = -INFINITY;
      for (int64_t j = 0; j < visible; ++j) {
        p[j] = dot(qi, k.data + j * k.token_stride + g * k.head_stride, s.qk_dim) * s.scale;
        mx = std::max(mx, p[j]);
      }
      float sum = 0.f;
      for (int64_t j = 0; j < visible; ++j) sum += (p[j] = std::exp(p[j] - mx));
      const float inv = 1.0f / sum;
      float* o = out + (i * nh + h) * s.v_dim;
      std::fill(o, o + s.v_dim, 0.0f);
      for (int64_t j = 0; j < visible; ++j) {
        const float w = p[j] * inv;
        const float* vj = v.data + j * v.token_stride + g * v.head_stride;
#pragma omp simd
        for (int64_t c = 0; c < s.v_dim; ++c) o[c] += w * vj[c];
      }
    }
  };
  // Threads pay off only beyond a few hundred thousand multiply-adds (a tiny model's decode).
  if (L * nh * keys * (s.qk_dim + s.v_dim) > (1 << 18)) {
    parallel_for(L * nh, run);
  } else {
    run(0, L * nh);
  }
}

}  // namespace di::kernels::cpu
