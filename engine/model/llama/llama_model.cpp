// LlamaModel: the layer loop, GQA attention over the cached K/V, SwiGLU MLP, head. See
// llama_model.h.
#include "engine/model/llama/llama_model.h"

#include <cmath>
#include <cstring>

#include "engine/model/batch_check.h"
#include "engine/model/prenorm_decoder.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/threads.h"
#ifdef DI_WITH_CUDA
#include "engine/model/llama/llama_cuda_model.h"
#endif

namespace di::engine::llama {
namespace cpu = di::kernels::cpu;

namespace {
constexpr int32_t kKvGroup = 0;  // the only cache group: [K | V] of one token of one layer
}

LlamaModel::LlamaModel(LlamaConfig config, std::unique_ptr<LlamaWeights> weights, std::string model_dir)
    : config_(std::move(config)), weights_(std::move(weights)), rope_(config_.rope, RopeLayout::kHalf) {
  const LlamaConfig& c = config_;
  info_ = model_info_from(c.model_type, std::move(model_dir), c);
  const int64_t kv_width = int64_t{c.num_key_value_heads} * c.head_dim;
  groups_.push_back({"kv", CacheKind::kFull, c.num_hidden_layers,
                     static_cast<int64_t>(2 * kv_width * sizeof(float)), 0, 1, 0});
}

void LlamaModel::attention(int32_t l, const SequenceInput& seq, const float* h, float* out) const {
  const LlamaConfig& c = config_;
  const LlamaLayerWeights& w = weights_->layers[l];
  const int64_t L = seq.num_tokens, H = c.hidden_size, hd = c.head_dim;
  const int64_t nh = c.num_attention_heads, nkv = c.num_key_value_heads;
  const int64_t qw = nh * hd, kvw = nkv * hd, S = seq.start_pos + L;
  const float eps = static_cast<float>(c.rms_norm_eps);

  std::vector<float> q(static_cast<size_t>(L * qw)), k(static_cast<size_t>(L * kvw)), v(static_cast<size_t>(L * kvw));
  cpu::linear(h, L, H, w.q_proj, qw, q.data());
  cpu::linear(h, L, H, w.k_proj, kvw, k.data());
  cpu::linear(h, L, H, w.v_proj, kvw, v.data());
  cpu::add_bias(q.data(), L, qw, qw, w.q_bias);
  cpu::add_bias(k.data(), L, kvw, kvw, w.k_bias);
  cpu::add_bias(v.data(), L, kvw, kvw, w.v_bias);
  if (c.qk_norm) {  // Qwen3: RMSNorm over each head's channels, before rope
    cpu::rms_norm(q.data(), w.q_norm, L * nh, hd, hd, eps, q.data());
    cpu::rms_norm(k.data(), w.k_norm, L * nkv, hd, hd, eps, k.data());
  }
  for (int64_t i = 0; i < L; ++i) {
    const int64_t pos = seq.start_pos + i;
    rope_.apply(q.data() + i * qw, nh, hd, pos);
    rope_.apply(k.data() + i * kvw, nkv, hd, pos);
    float* entry = static_cast<float*>(seq.cache->entry(kKvGroup, l, pos));
    std::memcpy(entry, k.data() + i * kvw, static_cast<size_t>(kvw) * sizeof(float));
    std::memcpy(entry + kvw, v.data() + i * kvw, static_cast<size_t>(kvw) * sizeof(float));
  }
  // Gather the sequence's whole K/V history of this layer (the cache may be paged).
  std::vector<float> kv(static_cast<size_t>(S * 2 * kvw));
  for (int64_t j = 0; j < S; ++j)
    std::memcpy(kv.data() + j * 2 * kvw, seq.cache->entry(kKvGroup, l, j), static_cast<size_t>(2 * kvw) * sizeof(float));

  cpu::AttentionShape shape;
  shape.num_queries = L;
  shape.first_pos = seq.start_pos;
  shape.num_heads = nh;
  shape.num_kv_heads = nkv;
  shape.qk_dim = hd;
  shape.v_dim = hd;
  shape.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> attn(static_cast<size_t>(L * qw));
  cpu::causal_attention(shape, q.data(), {kv.data(), 2 * kvw, hd}, {kv.data() + kvw, 2 * kvw, hd}, attn.data());
  cpu::linear(attn.data(), L, qw, w.o_proj, H, out);
  cpu::add_bias(out, L, H, H, w.o_bias);
}

void LlamaModel::mlp(int32_t l, const float* h, int64_t rows, float* out) const {
  const LlamaConfig& c = config_;
  const LlamaLayerWeights& w = weights_->layers[l];
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  std::vector<float> gate(static_cast<size_t>(rows * I)), up(static_cast<size_t>(rows * I));
  cpu::linear(h, rows, H, w.gate_proj, I, gate.data());
  cpu::linear(h, rows, H, w.up_proj, I, up.data());
  cpu::add_bias(gate.data(), rows, I, I, w.gate_bias);
  cpu::add_bias(up.data(), rows, I, I, w.up_bias);
  cpu::silu_and_mul(gate.data(), up.data(), rows * I, gate.data());
  cpu::linear(gate.data(), rows, I, w.down_proj, H, out);
  cpu::add_bias(out, rows, H, H, w.down_bias);
}

void LlamaModel::forward_sequence(const SequenceInput& seq, float* logits) const {
  const LlamaConfig& c = config_;
  const LlamaWeights& w = *weights_;
  const PrenormDecoder d{c.hidden_size, c.num_hidden_layers, c.vocab_size, static_cast<float>(c.rms_norm_eps),
                         w.embed, w.norm, w.lm_head};
  prenorm_decoder_forward(
      d, seq, logits,
      [&](int32_t l) { return std::make_pair(w.layers[l].input_layernorm, w.layers[l].post_attention_layernorm); },
      [&](int32_t l, const float* h, float* out) { attention(l, seq, h, out); },
      [&](int32_t l, const float* h, float* out) { mlp(l, h, seq.num_tokens, out); });
}

Status LlamaModel::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  return forward_each_sequence(batch, config_.vocab_size, config_.max_position_embeddings, logits,
                               [this](const SequenceInput& s, float* rows) { forward_sequence(s, rows); });
}

Result<std::unique_ptr<Model>> create_llama_model(const std::string& model_dir, const nlohmann::json& json,
                                                  const ModelOptions& options) {
  DI_ASSIGN_OR_RETURN(LlamaConfig config, parse_llama_config(json));
#ifdef DI_WITH_CUDA
  if (options.device == "cuda") return LlamaCudaModel::load(model_dir, config, options);
#endif
  if (options.device != "cpu") return Status::unsupported("device '" + options.device + "': not available for " + config.model_type);
  DI_ASSIGN_OR_RETURN(auto weights, load_llama_weights(model_dir, config));
  if (options.num_threads > 0) cpu::set_num_threads(options.num_threads);
  return std::unique_ptr<Model>(new LlamaModel(std::move(config), std::move(weights), model_dir));
}

}  // namespace di::engine::llama
