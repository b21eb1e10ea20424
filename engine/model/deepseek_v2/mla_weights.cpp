// load_mla_weights: see mla_weights.h.
#include "engine/model/deepseek_v2/mla_weights.h"

#include <cstring>
#include <set>

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


Status load_decoder_layer(WeightLoader& w, WeightStore& store, const MlaConfig& c, int32_t l, MlaLayerWeights& L) {
  const std::string p = layer_prefix(l);
  const int64_t h = c.hidden_size;
  DI_ASSIGN_OR_RETURN(L.input_layernorm, w.f32({p + "input_layernorm.weight"}, {h}));
  DI_ASSIGN_OR_RETURN(L.post_attention_layernorm, w.f32({p + "post_attention_layernorm.weight"}, {h}));
  DI_RETURN_IF_ERROR(load_attention(w, store, c, l, L.attn));
  L.is_moe = c.is_moe_layer(l);
  if (L.is_moe) return load_moe(w, c, l, L.moe);
  return load_mlp(w, p + "mlp.", h, c.intermediate_size, c.mlp_bias, L.mlp);
}

// The layer indices at or past `first` that hold an MTP layer: any of their tensors is one only
// an MTP layer has (enorm, hnorm, eh_proj, shared_head). A plain decoder layer there stays an
// unexpected tensor (num_hidden_layers too small is a wrong config, not a draft layer).
std::vector<int32_t> mtp_layers_in(const Checkpoint& ck, int32_t first) {
  const std::string lead = "model.layers.";
  std::set<int32_t> found;
  for (const std::string& n : ck.names()) {
    if (n.compare(0, lead.size(), lead) != 0) continue;
    const size_t dot = n.find('.', lead.size());
    if (dot == std::string::npos || dot == lead.size() || dot - lead.size() > 9) continue;
    int64_t l = 0;
    bool digits = true;
    for (size_t i = lead.size(); i < dot && digits; ++i) {
      digits = n[i] >= '0' && n[i] <= '9';
      l = l * 10 + (n[i] - '0');
    }
    if (!digits || l < first) continue;
    const std::string rest = n.substr(dot + 1);
    for (const char* own : {"enorm.", "hnorm.", "eh_proj.", "shared_head."})
      if (rest.rfind(own, 0) == 0) found.insert(static_cast<int32_t>(l));
  }
  return {found.begin(), found.end()};
}

// A tensor the MTP layer may store as a copy of the main model's (DeepSeek-V3 does, for
// embed_tokens and shared_head.head): the main one when absent or byte-identical, so a copy
// costs no memory; else its own.
Result<const float*> shared_or_own(WeightLoader& w, const Checkpoint& ck, const std::string& name,
                                   const std::string& main_name, const float* main, int64_t vocab, int64_t hidden) {
  const TensorView* own = ck.find(name);
  if (!own) return main;
  const TensorView* ref = main_name.empty() ? nullptr : ck.find(main_name);
  if (ref && ref->dtype_text == own->dtype_text && ref->shape == own->shape && ref->nbytes == own->nbytes &&
      std::memcmp(ref->data, own->data, static_cast<size_t>(own->nbytes)) == 0) {
    DI_RETURN_IF_ERROR(w.tensor({name}, {vocab, hidden}).status());  // taken, unused
    return main;
  }
  return w.f32({name}, {vocab, hidden});
}

Status load_mtp_layer(WeightLoader& w, WeightStore& store, const MlaConfig& c, const MlaWeights& main, int32_t k,
                      MlaMtpLayerWeights& m) {
  const int32_t l = c.num_hidden_layers + k;
  const std::string p = layer_prefix(l);
  const int64_t h = c.hidden_size, v = c.vocab_size;
  const Checkpoint& ck = *store.checkpoint;
  DI_ASSIGN_OR_RETURN(m.enorm, w.f32({p + "enorm.weight"}, {h}));
  DI_ASSIGN_OR_RETURN(m.hnorm, w.f32({p + "hnorm.weight"}, {h}));
  DI_ASSIGN_OR_RETURN(m.eh_proj, w.linear({p + "eh_proj.weight"}, h, 2 * h));
  DI_ASSIGN_OR_RETURN(m.head_norm, w.f32({p + "shared_head.norm.weight"}, {h}));
  DI_ASSIGN_OR_RETURN(m.embed, shared_or_own(w, ck, p + "embed_tokens.weight", "model.embed_tokens.weight", main.embed,
                                             v, h));
  const std::string main_head = c.tie_word_embeddings && !ck.find("lm_head.weight") ? "model.embed_tokens.weight"
                                                                                      : "lm_head.weight";
  DI_ASSIGN_OR_RETURN(m.head, shared_or_own(w, ck, p + "shared_head.head.weight", main_head, main.lm_head, v, h));
  DI_RETURN_IF_ERROR(load_decoder_layer(w, store, c, l, m.block));
  // Whole layers only: a tensor of this layer nothing above read is a checkpoint we do not know.
  return w.check_all_taken(p);
}

// The MTP layers as a decoder can run them, from the views the main loader took, by a loader
// of their own so that a missing or unknown MTP tensor only turns speculative decoding off.
void load_mtp_layers(const MlaConfig& c, MlaWeights& weights, bool for_device) {
  if (c.num_nextn_predict_layers < 1) {
    if (!weights.mtp.empty())
      weights.mtp_unavailable = "config.json sets num_nextn_predict_layers 0 (its " +
                                std::to_string(weights.mtp.size()) + " tensors past the decoder are not used)";
    return;
  }
  weights.mtp_layers.resize(c.num_nextn_predict_layers);
  for (int32_t k = 0; k < c.num_nextn_predict_layers; ++k) {
    WeightLoader w(weights.store, c.model_type);
    w.set_quant(c.quant);
    w.keep_bf16(for_device);
    const Status st = load_mtp_layer(w, weights.store, c, weights, k, weights.mtp_layers[k]);
    if (!st.is_ok()) {
      weights.mtp_layers.clear();
      weights.mtp_unavailable = "MTP layer " + std::to_string(c.num_hidden_layers + k) + ": " + st.message();
      return;
    }
  }
}

}  // namespace

Result<std::unique_ptr<MlaWeights>> load_mla_weights(const std::string& model_dir, const MlaConfig& c,
                                                     bool for_device) {
  auto weights = std::make_unique<MlaWeights>();
  DI_ASSIGN_OR_RETURN(weights->store.checkpoint, Checkpoint::open(model_dir));
  WeightLoader w(weights->store, c.model_type);
  w.set_quant(c.quant);
  w.keep_bf16(for_device);
  DI_ASSIGN_OR_RETURN(DecoderEnds ends, load_decoder_ends(w, c.vocab_size, c.hidden_size, c.tie_word_embeddings));
  weights->embed = ends.embed;
  weights->norm = ends.norm;
  weights->lm_head = ends.lm_head;
  weights->layers.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l)
    DI_RETURN_IF_ERROR(load_decoder_layer(w, weights->store, c, l, weights->layers[l]));
  std::vector<std::string> extra;
  for (int32_t l : mtp_layers_in(*weights->store.checkpoint, c.num_hidden_layers)) extra.push_back(layer_prefix(l));
  weights->mtp = w.take_prefix(extra);
  DI_RETURN_IF_ERROR(w.check_all_taken());
  load_mtp_layers(c, *weights, for_device);
  return weights;
}

}  // namespace di::engine::deepseek_v2
