// Compressor and lightning indexer: see compressor.h.
#include "engine/model/deepseek_v4/compressor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"
#include "kernels/cpu/rms_norm.h"

namespace di::engine::deepseek_v4 {

void compress_chunk(const DeepseekV4Config& c, const CompressorWeights& w, const Rope& rope,
                    const float* h, const Chunk& chunk, int32_t entry_group, int32_t layer,
                    const CompressorState& state) {
  const int64_t L = chunk.num_tokens, s = chunk.start_pos, m = w.rate, d = w.dim;
  const int64_t width = w.overlap ? 2 * d : d;
  // Window w needs its own rows and, with overlap, the previous window's: a ring of 2m (or m).
  const int64_t ring = w.overlap ? 2 * m : m;
  std::vector<float> kv(static_cast<size_t>(L * width)), gate(static_cast<size_t>(L * width));
  kernels::cpu::linear(h, L, c.hidden_size, w.wkv, width, kv.data());
  kernels::cpu::linear(h, L, c.hidden_size, w.wgate, width, gate.data());

  // Raw (kv, gate) rows of absolute position p: this chunk's, or saved by an earlier forward.
  auto row = [&](int64_t p, const float** kv_row, const float** gate_row) {
    if (p >= s) {
      *kv_row = kv.data() + (p - s) * width;
      *gate_row = gate.data() + (p - s) * width;
    } else {
      const float* saved = cache_row(chunk, state.group, state.layer, p % ring) + state.offset;
      *kv_row = saved;
      *gate_row = saved + width;
    }
  };

  std::vector<float> logits(static_cast<size_t>(2 * m)), values(static_cast<size_t>(2 * m));
  std::vector<float> entry(static_cast<size_t>(d));
  for (int64_t win = s / m; win < (s + L) / m; ++win) {
    for (int64_t ch = 0; ch < d; ++ch) {
      int64_t n = 0;
      if (w.overlap && win > 0) {  // Ca series of the previous window (first half of the slots)
        for (int64_t j = 0; j < m; ++j) {
          const float *kr, *gr;
          row((win - 1) * m + j, &kr, &gr);
          logits[n] = gr[ch] + w.ape[j * width + ch];
          values[n++] = kr[ch];
        }
      }
      const int64_t off = w.overlap ? d : 0;  // Cb series (or the only one)
      for (int64_t j = 0; j < m; ++j) {
        const float *kr, *gr;
        row(win * m + j, &kr, &gr);
        logits[n] = gr[off + ch] + w.ape[j * width + off + ch];
        values[n++] = kr[off + ch];
      }
      float mx = -INFINITY;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, logits[j]);
      float sum = 0.f;
      for (int64_t j = 0; j < n; ++j) sum += (logits[j] = std::exp(logits[j] - mx));
      float acc = 0.f;
      for (int64_t j = 0; j < n; ++j) acc += values[j] * (logits[j] / sum);
      entry[ch] = acc;
    }
    kernels::cpu::rms_norm(entry.data(), w.norm, 1, d, d, static_cast<float>(c.rms_norm_eps), entry.data());
    rope.apply(entry.data(), 1, d, d, win * m);
    std::memcpy(cache_row(chunk, entry_group, layer, win), entry.data(), static_cast<size_t>(d) * 4);
  }
  for (int64_t p = std::max(s, s + L - ring); p < s + L; ++p) {
    float* saved = cache_row(chunk, state.group, state.layer, p % ring) + state.offset;
    std::memcpy(saved, kv.data() + (p - s) * width, static_cast<size_t>(width) * 4);
    std::memcpy(saved + width, gate.data() + (p - s) * width, static_cast<size_t>(width) * 4);
  }
}

std::vector<std::vector<int32_t>> indexer_select(const DeepseekV4Config& c,
                                                 const AttentionWeights& w, const Rope& rope,
                                                 const float* q_residual, const float* h,
                                                 const Chunk& chunk, int32_t key_group,
                                                 int32_t layer) {
  const int64_t L = chunk.num_tokens, s = chunk.start_pos, m = c.compress_rate_csa;
  const int64_t nh = c.index_n_heads, d = c.index_head_dim;
  std::vector<float> q(static_cast<size_t>(L * nh * d)), weights(static_cast<size_t>(L * nh));
  kernels::cpu::linear(q_residual, L, w.index_wq_b, q.data());
  kernels::cpu::linear(h, L, c.hidden_size, w.index_weights_proj, nh, weights.data());
  const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float weight_scale = 1.0f / std::sqrt(static_cast<float>(nh));

  std::vector<std::vector<int32_t>> selected(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    const int64_t pos = s + i;
    float* qi = q.data() + i * nh * d;
    rope.apply(qi, nh, d, d, pos);
    const int64_t visible = (pos + 1) / m;  // entries whose window has closed by this token
    auto& out = selected[i];
    if (visible <= c.index_topk) {
      for (int64_t e = 0; e < visible; ++e) out.push_back(static_cast<int32_t>(e));
      continue;
    }
    std::vector<std::pair<float, int32_t>> scores(static_cast<size_t>(visible));
    for (int64_t e = 0; e < visible; ++e) {
      const float* key = cache_row(chunk, key_group, layer, e);
      float score = 0.f;
      for (int64_t hh = 0; hh < nh; ++hh) {
        const float dot = kernels::cpu::dot(qi + hh * d, key, d);
        score += std::max(dot, 0.0f) * softmax_scale * (weights[i * nh + hh] * weight_scale);
      }
      scores[e] = {score, static_cast<int32_t>(e)};
    }
    std::partial_sort(scores.begin(), scores.begin() + c.index_topk, scores.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    for (int32_t k = 0; k < c.index_topk; ++k) out.push_back(scores[k].second);
  }
  return selected;
}

}  // namespace di::engine::deepseek_v4
