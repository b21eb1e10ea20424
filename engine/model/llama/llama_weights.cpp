// load_llama_weights: see llama_weights.h.
#include "engine/model/llama/llama_weights.h"

namespace di::engine::llama {
namespace {

std::vector<std::string> layer_name(int32_t layer, const std::string& suffix) {
  return {"model.layers." + std::to_string(layer) + "." + suffix};
}

// A Linear's weight [out, in] and, when `with_bias`, its bias [out].
Status load_linear(WeightLoader& w, int32_t l, const std::string& name, int64_t out, int64_t in,
                   bool with_bias, const float*& weight, const float*& bias) {
  DI_ASSIGN_OR_RETURN(weight, w.f32(layer_name(l, name + ".weight"), {out, in}));
  if (with_bias) {
    DI_ASSIGN_OR_RETURN(bias, w.f32(layer_name(l, name + ".bias"), {out}));
  }
  return Status::ok();
}

Status load_layer(WeightLoader& w, const LlamaConfig& c, int32_t l, LlamaLayerWeights& L) {
  const int64_t h = c.hidden_size, q = int64_t{c.num_attention_heads} * c.head_dim,
                kv = int64_t{c.num_key_value_heads} * c.head_dim, inter = c.intermediate_size;
  DI_ASSIGN_OR_RETURN(L.input_layernorm, w.f32(layer_name(l, "input_layernorm.weight"), {h}));
  DI_ASSIGN_OR_RETURN(L.post_attention_layernorm, w.f32(layer_name(l, "post_attention_layernorm.weight"), {h}));
  DI_RETURN_IF_ERROR(load_linear(w, l, "self_attn.q_proj", q, h, c.qkv_bias, L.q_proj, L.q_bias));
  DI_RETURN_IF_ERROR(load_linear(w, l, "self_attn.k_proj", kv, h, c.qkv_bias, L.k_proj, L.k_bias));
  DI_RETURN_IF_ERROR(load_linear(w, l, "self_attn.v_proj", kv, h, c.qkv_bias, L.v_proj, L.v_bias));
  DI_RETURN_IF_ERROR(load_linear(w, l, "self_attn.o_proj", h, q, c.o_bias, L.o_proj, L.o_bias));
  if (c.qk_norm) {
    DI_ASSIGN_OR_RETURN(L.q_norm, w.f32(layer_name(l, "self_attn.q_norm.weight"), {c.head_dim}));
    DI_ASSIGN_OR_RETURN(L.k_norm, w.f32(layer_name(l, "self_attn.k_norm.weight"), {c.head_dim}));
  }
  DI_RETURN_IF_ERROR(load_linear(w, l, "mlp.gate_proj", inter, h, c.mlp_bias, L.gate_proj, L.gate_bias));
  DI_RETURN_IF_ERROR(load_linear(w, l, "mlp.up_proj", inter, h, c.mlp_bias, L.up_proj, L.up_bias));
  DI_RETURN_IF_ERROR(load_linear(w, l, "mlp.down_proj", h, inter, c.mlp_bias, L.down_proj, L.down_bias));
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<LlamaWeights>> load_llama_weights(const std::string& model_dir, const LlamaConfig& c) {
  auto weights = std::make_unique<LlamaWeights>();
  DI_ASSIGN_OR_RETURN(weights->store.checkpoint, Checkpoint::open(model_dir));
  WeightLoader w(weights->store, c.model_type);
  DI_ASSIGN_OR_RETURN(DecoderEnds ends, load_decoder_ends(w, c.vocab_size, c.hidden_size, c.tie_word_embeddings));
  weights->embed = ends.embed;
  weights->norm = ends.norm;
  weights->lm_head = ends.lm_head;
  weights->layers.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) DI_RETURN_IF_ERROR(load_layer(w, c, l, weights->layers[l]));
  DI_RETURN_IF_ERROR(w.check_all_taken());
  return weights;
}

}  // namespace di::engine::llama
