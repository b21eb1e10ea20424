// mla_attention: see mla_attention.h. Both paths compute the same softmax(q.k * scale) v per
// head; they differ only in the order of the products with kv_b_proj.
#include "engine/model/deepseek_v2/mla_attention.h"

#include <cstring>
#include <vector>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"
#include "kernels/cpu/rms_norm.h"

namespace di::engine::deepseek_v2 {
namespace cpu = di::kernels::cpu;

namespace {

// transformers builds q_a_layernorm and kv_a_layernorm without passing rms_norm_eps.
constexpr float kLatentNormEps = 1e-6f;

// Plain: keys [S, heads, nope | rope] and values [S, heads, v] from every cached latent.
void attend_plain(const MlaConfig& c, const MlaAttentionWeights& w, const cpu::AttentionShape& base,
                  const float* q, const float* latent, int64_t S, float* attn) {
  const int64_t nh = c.num_attention_heads, nope = c.qk_nope_head_dim, rope = c.qk_rope_head_dim;
  const int64_t v = c.v_head_dim, kvl = c.kv_lora_rank, qk = nope + rope, entry = kvl + rope;
  std::vector<float> kv(static_cast<size_t>(S * nh * (nope + v)));
  cpu::linear(latent, S, kvl, w.kv_b_proj, nh * (nope + v), kv.data(), entry, nh * (nope + v));
  std::vector<float> keys(static_cast<size_t>(S * nh * qk));
  for (int64_t j = 0; j < S; ++j)
    for (int64_t head = 0; head < nh; ++head) {
      float* k = keys.data() + (j * nh + head) * qk;
      std::memcpy(k, kv.data() + (j * nh + head) * (nope + v), static_cast<size_t>(nope) * sizeof(float));
      std::memcpy(k + nope, latent + j * entry + kvl, static_cast<size_t>(rope) * sizeof(float));
    }
  cpu::AttentionShape s = base;
  s.num_kv_heads = nh;
  s.qk_dim = qk;
  s.v_dim = v;
  cpu::causal_attention(s, q, {keys.data(), nh * qk, qk}, {kv.data() + nope, nh * (nope + v), nope + v}, attn);
}

// Absorbed: q_nope W_UK^T gives a query in latent space; one shared "kv head" (latent | rope
// key) serves every head; the latent-space output is lifted by W_UV per head.
void attend_absorbed(const MlaConfig& c, const MlaAttentionWeights& w, const cpu::AttentionShape& base,
                     const float* q, const float* latent, float* attn) {
  const int64_t L = base.num_queries, nh = c.num_attention_heads, nope = c.qk_nope_head_dim;
  const int64_t rope = c.qk_rope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank, qk = nope + rope;
  const int64_t entry = kvl + rope;
  std::vector<float> q_lat(static_cast<size_t>(L * nh * entry));
  for (int64_t head = 0; head < nh; ++head) {
    cpu::linear(q + head * qk, L, nope, w.w_uk_t + head * kvl * nope, kvl, q_lat.data() + head * entry, nh * qk,
                nh * entry);
    for (int64_t i = 0; i < L; ++i)
      std::memcpy(q_lat.data() + (i * nh + head) * entry + kvl, q + (i * nh + head) * qk + nope,
                  static_cast<size_t>(rope) * sizeof(float));
  }
  cpu::AttentionShape s = base;
  s.num_kv_heads = 1;
  s.qk_dim = entry;
  s.v_dim = kvl;
  std::vector<float> o_lat(static_cast<size_t>(L * nh * kvl));
  cpu::causal_attention(s, q_lat.data(), {latent, entry, 0}, {latent, entry, 0}, o_lat.data());
  for (int64_t head = 0; head < nh; ++head)
    cpu::linear(o_lat.data() + head * kvl, L, kvl, w.kv_b_proj + (head * (nope + v) + nope) * kvl, v, attn + head * v,
                nh * kvl, nh * v);
}

}  // namespace

MlaPath choose_mla_path(const MlaConfig& c, int64_t L, int64_t start_pos) {
  const int64_t S = start_pos + L, nh = c.num_attention_heads, kvl = c.kv_lora_rank;
  const int64_t nope = c.qk_nope_head_dim, rope = c.qk_rope_head_dim, v = c.v_head_dim;
  const int64_t plain = S * nh * (nope + v) * kvl + L * S * nh * (nope + rope + v);
  const int64_t absorbed = L * nh * (nope + v) * kvl + L * S * nh * (2 * kvl + rope);
  return absorbed < plain ? MlaPath::kAbsorbed : MlaPath::kPlain;
}

void mla_attention(const MlaConfig& c, const MlaAttentionWeights& w, const RotaryEmbedding& rope_emb, int32_t layer,
                   int32_t cache_group, const SequenceInput& seq, MlaPath path, const float* h, float* out) {
  const int64_t L = seq.num_tokens, H = c.hidden_size, nh = c.num_attention_heads;
  const int64_t nope = c.qk_nope_head_dim, rope = c.qk_rope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank;
  const int64_t qk = nope + rope, entry = kvl + rope, S = seq.start_pos + L;

  std::vector<float> q(static_cast<size_t>(L * nh * qk));
  if (c.q_lora_rank > 0) {
    const int64_t r = c.q_lora_rank;
    std::vector<float> qa(static_cast<size_t>(L * r));
    cpu::linear(h, L, w.q_a_proj, qa.data());
    cpu::add_bias(qa.data(), L, r, r, w.q_a_bias);
    cpu::rms_norm(qa.data(), w.q_a_layernorm, L, r, r, kLatentNormEps, qa.data());
    cpu::linear(qa.data(), L, w.q_b_proj, q.data());
  } else {
    cpu::linear(h, L, w.q_proj, q.data());
  }
  std::vector<float> ckv(static_cast<size_t>(L * entry));
  cpu::linear(h, L, w.kv_a_proj, ckv.data());
  cpu::add_bias(ckv.data(), L, entry, entry, w.kv_a_bias);
  cpu::rms_norm(ckv.data(), w.kv_a_layernorm, L, kvl, entry, kLatentNormEps, ckv.data());
  for (int64_t i = 0; i < L; ++i) {
    const int64_t pos = seq.start_pos + i;
    rope_emb.apply(q.data() + i * nh * qk + nope, nh, qk, pos);
    rope_emb.apply(ckv.data() + i * entry + kvl, 1, entry, pos);
    std::memcpy(seq.cache->entry(cache_group, layer, pos), ckv.data() + i * entry,
                static_cast<size_t>(entry) * sizeof(float));
  }
  // The whole latent history of this layer, gathered (the cache may be paged).
  std::vector<float> latent(static_cast<size_t>(S * entry));
  for (int64_t j = 0; j < S; ++j)
    std::memcpy(latent.data() + j * entry, seq.cache->entry(cache_group, layer, j),
                static_cast<size_t>(entry) * sizeof(float));

  cpu::AttentionShape base;
  base.num_queries = L;
  base.first_pos = seq.start_pos;
  base.num_heads = nh;
  base.scale = static_cast<float>(c.softmax_scale);
  if (path == MlaPath::kAuto) path = choose_mla_path(c, L, seq.start_pos);
  std::vector<float> attn(static_cast<size_t>(L * nh * v));
  if (path == MlaPath::kAbsorbed) {
    attend_absorbed(c, w, base, q.data(), latent.data(), attn.data());
  } else {
    attend_plain(c, w, base, q.data(), latent.data(), S, attn.data());
  }
  cpu::linear(attn.data(), L, w.o_proj, out);
  cpu::add_bias(out, L, H, H, w.o_bias);
}

}  // namespace di::engine::deepseek_v2
