// attention_forward: see attention.h.
#include "engine/model/deepseek_v4/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/model/deepseek_v4/compressor.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/threads.h"

namespace di::engine::deepseek_v4 {

void attention_forward(const DeepseekV4Config& c, const LayerWeights& lw, int32_t layer,
                       const Ropes& ropes, const CacheLayout& layout, const float* h,
                       const Chunk& chunk, float* out) {
  const AttentionWeights& w = lw.attn;
  // Layers past the main ones are MTP blocks, which DeepSeek builds with sliding attention.
  const AttnType type = layer < c.num_hidden_layers ? c.layer_types[layer] : AttnType::kSliding;
  const Rope& rope = type == AttnType::kSliding ? ropes.main : ropes.compress;
  const int64_t L = chunk.num_tokens, s = chunk.start_pos;
  const int64_t nh = c.num_attention_heads, hd = c.head_dim, W = c.sliding_window;
  const float eps = static_cast<float>(c.rms_norm_eps);

  std::vector<float> qr(static_cast<size_t>(L * c.q_lora_rank));
  kernels::cpu::linear(h, L, w.wq_a, qr.data());
  kernels::cpu::rms_norm(qr.data(), w.q_norm, L, c.q_lora_rank, c.q_lora_rank, eps, qr.data());
  std::vector<float> q(static_cast<size_t>(L * nh * hd));
  kernels::cpu::linear(qr.data(), L, w.wq_b, q.data());
  kernels::cpu::rms_norm(q.data(), nullptr, L * nh, hd, hd, eps, q.data());  // per head
  std::vector<float> kv(static_cast<size_t>(L * hd));
  kernels::cpu::linear(h, L, w.wkv, kv.data());
  kernels::cpu::rms_norm(kv.data(), w.kv_norm, L, hd, hd, eps, kv.data());
  for (int64_t i = 0; i < L; ++i) {
    rope.apply(q.data() + i * nh * hd, nh, hd, hd, s + i);
    rope.apply(kv.data() + i * hd, 1, hd, hd, s + i);
  }

  // Compressed entries first: a query may attend to a window that closes at its own token.
  const int32_t tl = type == AttnType::kSliding ? -1 : layout.type_layer[layer];
  int32_t entry_group = -1;
  std::vector<std::vector<int32_t>> selected;
  if (type == AttnType::kHCA) {
    entry_group = layout.hca_kv;
    compress_chunk(c, w.compressor, ropes.compress, h, chunk, entry_group, tl,
                   {layout.hca_state, tl, 0});
  } else if (type == AttnType::kCSA) {
    entry_group = layout.csa_kv;
    compress_chunk(c, w.compressor, ropes.compress, h, chunk, entry_group, tl,
                   {layout.csa_state, tl, 0});
    compress_chunk(c, w.indexer, ropes.compress, h, chunk, layout.csa_index_keys, tl,
                   {layout.csa_state, tl, 4 * hd});
    selected = indexer_select(c, w, ropes.compress, qr.data(), h, chunk, layout.csa_index_keys, tl);
  }

  // The K=V rows each new token attends to: its window of recent tokens, then compressed ones.
  std::vector<std::vector<const float*>> keys(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    const int64_t p = s + i;
    auto& k = keys[i];
    for (int64_t j = std::max<int64_t>(0, p - W + 1); j <= p; ++j)
      k.push_back(j >= s ? kv.data() + (j - s) * hd : cache_row(chunk, layout.swa_kv, layer, j % W));
    if (type == AttnType::kHCA) {
      const int64_t visible = (p + 1) / c.compress_rate_hca;
      for (int64_t e = 0; e < visible; ++e) k.push_back(cache_row(chunk, entry_group, tl, e));
    } else if (type == AttnType::kCSA) {
      for (int32_t e : selected[i]) k.push_back(cache_row(chunk, entry_group, tl, e));
    }
  }

  std::vector<float> attn(static_cast<size_t>(L * nh * hd));
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  auto heads = [&](int64_t t0, int64_t t1) {
    std::vector<float> logits;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / nh, head = t % nh;
      const auto& k = keys[i];
      const float* qh = q.data() + i * nh * hd + head * hd;
      logits.resize(k.size());
      float mx = w.sinks[head];
      for (size_t j = 0; j < k.size(); ++j) {
        logits[j] = kernels::cpu::dot(qh, k[j], hd) * scale;
        mx = std::max(mx, logits[j]);
      }
      float sum = std::exp(w.sinks[head] - mx);  // the sink takes probability mass, adds no value
      for (size_t j = 0; j < k.size(); ++j) sum += (logits[j] = std::exp(logits[j] - mx));
      float* o = attn.data() + i * nh * hd + head * hd;
      std::fill(o, o + hd, 0.0f);
      for (size_t j = 0; j < k.size(); ++j) {
        const float p = logits[j] / sum;
        const float* v = k[j];
        for (int64_t d = 0; d < hd; ++d) o[d] += p * v[d];
      }
    }
  };
  // Threads only pay off beyond a few hundred thousand multiply-adds (decode of tiny models).
  if (L * nh * hd * static_cast<int64_t>(keys.back().size()) > (1 << 18)) {
    kernels::cpu::parallel_for(L * nh, heads);
  } else {
    heads(0, L * nh);
  }
  // K=V carried rope into the output's rope slice: rotate it back by the query's position.
  for (int64_t i = 0; i < L; ++i) rope.apply(attn.data() + i * nh * hd, nh, hd, hd, s + i, true);

  // Grouped output projection: each group of heads down to o_lora_rank, then one mix to hidden.
  const int64_t groups = c.o_groups, rank = c.o_lora_rank, per_group = nh * hd / groups;
  std::vector<float> grouped(static_cast<size_t>(L * groups * rank));
  for (int64_t g = 0; g < groups; ++g)
    kernels::cpu::linear(attn.data() + g * per_group, L, w.wo_a, g * rank, rank, grouped.data() + g * rank,
                         nh * hd, groups * rank);
  kernels::cpu::linear(grouped.data(), L, w.wo_b, out);

  for (int64_t p = std::max(s, s + L - W); p < s + L; ++p)
    std::memcpy(cache_row(chunk, layout.swa_kv, layer, p % W), kv.data() + (p - s) * hd,
                static_cast<size_t>(hd) * 4);
}

}  // namespace di::engine::deepseek_v4
