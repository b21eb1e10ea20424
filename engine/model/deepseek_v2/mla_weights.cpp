// load_mla_weights: see mla_weights.h.
#include "engine/model/deepseek_v2/mla_weights.h"

#include "kernels/cpu/quant_linear.h"

namespace di::engine::deepseek_v2 {
namespace {

std::string layer_prefix(int32_t layer) { return "model.layers." + std::to_string(layer) + "."; }

Status load_linear(WeightLoader& w, const std::string& name, int64_t out, int64_t in, bool with_bias,
                   kernels::LinearWeight& weight, const float*& bias) {
  DI_ASSIGN_OR_RETURN(weight, w.linear({name + ".weight"}, out, in));
  if (with_bias) {
    DI_ASSIGN_OR_RETURN(bias, w.f32({name + ".bias"}, {out}));
  }
  return Status::ok();
}

Status load_mlp(WeightLoader& w, const std::string& prefix, int64_t hidden, int32_t inter, bool bias, MlpWeights& m) {
  m.intermediate = inter;
  DI_RETURN_IF_ERROR(load_linear(w, prefix + "gate_proj", inter, hidden, bias, m.gate, m.gate_bias));
  DI_RETURN_IF_ERROR(load_linear(w, prefix + "up_proj", inter, hidden, bias, m.up, m.up_bias));
  DI_RETURN_IF_ERROR(load_linear(w, prefix + "down_proj", hidden, inter, bias, m.down, m.down_bias));
  return Status::ok();
}

Status load_attention(WeightLoader& w, WeightStore& store, const MlaConfig& c, int32_t l, MlaAttentionWeights& a) {
  const std::string p = layer_prefix(l) + "self_attn.";
  const int64_t h = c.hidden_size, nh = c.num_attention_heads, qk = c.qk_head_dim();
  const int64_t kvl = c.kv_lora_rank, nope = c.qk_nope_head_dim, v = c.v_head_dim;
  const float* unused = nullptr;
  if (c.q_lora_rank > 0) {
    DI_RETURN_IF_ERROR(load_linear(w, p + "q_a_proj", c.q_lora_rank, h, c.attention_bias, a.q_a_proj, a.q_a_bias));
    DI_ASSIGN_OR_RETURN(a.q_a_layernorm, w.f32({p + "q_a_layernorm.weight"}, {c.q_lora_rank}));
    DI_RETURN_IF_ERROR(load_linear(w, p + "q_b_proj", nh * qk, c.q_lora_rank, false, a.q_b_proj, unused));
  } else {
    DI_RETURN_IF_ERROR(load_linear(w, p + "q_proj", nh * qk, h, false, a.q_proj, unused));
  }
  DI_RETURN_IF_ERROR(load_linear(w, p + "kv_a_proj_with_mqa", kvl + c.qk_rope_head_dim, h, c.attention_bias,
                                 a.kv_a_proj, a.kv_a_bias));
  DI_ASSIGN_OR_RETURN(a.kv_a_layernorm, w.f32({p + "kv_a_layernorm.weight"}, {kvl}));
  kernels::LinearWeight kv_b;
  DI_RETURN_IF_ERROR(load_linear(w, p + "kv_b_proj", nh * (nope + v), kvl, false, kv_b, unused));
  if (kv_b.quantized()) {
    std::vector<float> dense(static_cast<size_t>(kv_b.out * kv_b.in));
    kernels::cpu::dequantize_rows(kv_b, 0, kv_b.out, dense.data());
    store.owned_f32.push_back(std::move(dense));
    a.kv_b_proj = store.owned_f32.back().data();
  } else {
    a.kv_b_proj = kv_b.f32();
  }
  DI_RETURN_IF_ERROR(load_linear(w, p + "o_proj", h, nh * v, c.attention_bias, a.o_proj, a.o_bias));

  std::vector<float> t(static_cast<size_t>(nh * kvl * nope));
  for (int64_t head = 0; head < nh; ++head)
    for (int64_t d = 0; d < nope; ++d) {
      const float* row = a.kv_b_proj + (head * (nope + v) + d) * kvl;
      for (int64_t r = 0; r < kvl; ++r) t[(head * kvl + r) * nope + d] = row[r];
    }
  store.owned_f32.push_back(std::move(t));
  a.w_uk_t = store.owned_f32.back().data();
  return Status::ok();
}

Status load_moe(WeightLoader& w, const MlaConfig& c, int32_t l, MoeWeights& m) {
  const std::string p = layer_prefix(l) + "mlp.";
  const int64_t h = c.hidden_size, e_count = c.n_routed_experts, inter = c.moe_intermediate_size;
  DI_ASSIGN_OR_RETURN(m.gate, w.f32({p + "gate.weight"}, {e_count, h}));
  if (c.routing == Routing::kSigmoidNoAux) {
    DI_ASSIGN_OR_RETURN(m.e_score_correction_bias, w.f32({p + "gate.e_score_correction_bias"}, {e_count}));
  }
  m.experts.resize(static_cast<size_t>(e_count));
  if (!w.pick({p + "experts.gate_up_proj"}).empty()) {
    // transformers' in-memory layout: gate_up [E, 2 * inter, hidden] (gate rows first), down
    // [E, hidden, inter]; routed experts carry no biases.
    DI_ASSIGN_OR_RETURN(const float* gate_up, w.f32({p + "experts.gate_up_proj"}, {e_count, 2 * inter, h}));
    DI_ASSIGN_OR_RETURN(const float* down, w.f32({p + "experts.down_proj"}, {e_count, h, inter}));
    for (int64_t e = 0; e < e_count; ++e) {
      MlpWeights& x = m.experts[e];
      x.intermediate = static_cast<int32_t>(inter);
      x.gate = kernels::LinearWeight::dense(gate_up + e * 2 * inter * h, inter, h);
      x.up = kernels::LinearWeight::dense(gate_up + (e * 2 + 1) * inter * h, inter, h);
      x.down = kernels::LinearWeight::dense(down + e * h * inter, h, inter);
    }
  } else {
    for (int64_t e = 0; e < e_count; ++e)
      DI_RETURN_IF_ERROR(load_mlp(w, p + "experts." + std::to_string(e) + ".", h, static_cast<int32_t>(inter), false,
                                  m.experts[e]));
  }
  if (c.n_shared_experts > 0)
    DI_RETURN_IF_ERROR(load_mlp(w, p + "shared_experts.", h, c.moe_intermediate_size * c.n_shared_experts, c.mlp_bias,
                                m.shared));
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<MlaWeights>> load_mla_weights(const std::string& model_dir, const MlaConfig& c) {
  auto weights = std::make_unique<MlaWeights>();
  DI_ASSIGN_OR_RETURN(weights->store.checkpoint, Checkpoint::open(model_dir));
  WeightLoader w(weights->store, c.model_type);
  w.set_quant(c.quant);
  const int64_t h = c.hidden_size;
  DI_ASSIGN_OR_RETURN(DecoderEnds ends, load_decoder_ends(w, c.vocab_size, c.hidden_size, c.tie_word_embeddings));
  weights->embed = ends.embed;
  weights->norm = ends.norm;
  weights->lm_head = ends.lm_head;
  weights->layers.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    MlaLayerWeights& L = weights->layers[l];
    const std::string p = layer_prefix(l);
    DI_ASSIGN_OR_RETURN(L.input_layernorm, w.f32({p + "input_layernorm.weight"}, {h}));
    DI_ASSIGN_OR_RETURN(L.post_attention_layernorm, w.f32({p + "post_attention_layernorm.weight"}, {h}));
    DI_RETURN_IF_ERROR(load_attention(w, weights->store, c, l, L.attn));
    L.is_moe = c.is_moe_layer(l);
    if (L.is_moe) {
      DI_RETURN_IF_ERROR(load_moe(w, c, l, L.moe));
    } else {
      DI_RETURN_IF_ERROR(load_mlp(w, p + "mlp.", h, c.intermediate_size, c.mlp_bias, L.mlp));
    }
  }
  for (int32_t i = 0; i < c.num_nextn_predict_layers; ++i) {
    auto mtp = w.take_prefix({layer_prefix(c.num_hidden_layers + i)});
    weights->mtp.insert(weights->mtp.end(), mtp.begin(), mtp.end());
  }
  DI_RETURN_IF_ERROR(w.check_all_taken());
  return weights;
}

}  // namespace di::engine::deepseek_v2
