// load_weights for deepseek_v4. See weights.h.
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {
namespace {

using Names = std::vector<std::string>;

// A layer tensor as DeepSeek names it, with or without save_pretrained's "model." prefix.
// DeepSeek's shipped names are these suffixes under "layers.N." and "mtp.N.": transformers'
// conversion only adds "model.", renames attn.kv_norm to attn.norm and renames the globals
// (embed, norm, hc_head_*), so the native compressor / indexer names (attn.compressor.*,
// attn.indexer.{wq_b,weights_proj,compressor.*}) are derived from that mapping, not from a file.
// Quantized projections carry a sibling ".scale" (WeightLoader::linear).
// Where one layer's tensors live: a main layer (layers.N.) or an MTP layer (mtp.N.), and its kinds.
struct LayerSite {
  Names prefixes;
  std::string label;  // for errors: "layers.3", "mtp.0"
  AttnType attn;
  MlpType mlp;
};

LayerSite main_layer(const DeepseekV4Config& c, int32_t l) {
  const std::string n = std::to_string(l);
  return {{"model.layers." + n + ".", "layers." + n + "."}, "layers." + n, c.layer_types[l], c.mlp_layer_types[l]};
}

// DeepSeek's MTP block is a sliding-attention layer with top-k routing.
LayerSite mtp_layer(int32_t k) {
  const std::string n = std::to_string(k);
  return {{"mtp." + n + ".", "model.mtp." + n + "."}, "mtp." + n, AttnType::kSliding, MlpType::kMoe};
}

Names layer_names(const LayerSite& site, const std::vector<std::string>& suffixes) {
  Names out;
  for (const std::string& prefix : site.prefixes)
    for (const std::string& s : suffixes) out.push_back(prefix + s);
  return out;
}

Status load_hc(WeightLoader& w, const DeepseekV4Config& c, const LayerSite& layer, const std::string& site,
               HcWeights& hc) {
  const int64_t mix = (2 + c.hc_mult) * c.hc_mult;
  DI_ASSIGN_OR_RETURN(hc.fn, w.f32(layer_names(layer, {"hc_" + site + "_fn"}), {mix, c.hc_mult * c.hidden_size}));
  DI_ASSIGN_OR_RETURN(hc.base, w.f32(layer_names(layer, {"hc_" + site + "_base"}), {mix}));
  DI_ASSIGN_OR_RETURN(hc.scale, w.f32(layer_names(layer, {"hc_" + site + "_scale"}), {3}));
  return Status::ok();
}

Status load_compressor(WeightLoader& w, const DeepseekV4Config& c, const LayerSite& layer,
                       const std::string& prefix, int32_t dim, int32_t rate, bool overlap,
                       CompressorWeights& cw) {
  cw.dim = dim;
  cw.rate = rate;
  cw.overlap = overlap;
  const int64_t width = overlap ? 2 * dim : dim;
  DI_ASSIGN_OR_RETURN(cw.wkv, w.f32(layer_names(layer, {prefix + "wkv.weight"}), {width, c.hidden_size}));
  DI_ASSIGN_OR_RETURN(cw.wgate, w.f32(layer_names(layer, {prefix + "wgate.weight"}), {width, c.hidden_size}));
  DI_ASSIGN_OR_RETURN(cw.ape, w.f32(layer_names(layer, {prefix + "ape"}), {rate, width}));
  DI_ASSIGN_OR_RETURN(cw.norm, w.f32(layer_names(layer, {prefix + "norm.weight"}), {dim}));
  return Status::ok();
}

Status load_expert(WeightLoader& w, const DeepseekV4Config& c, const LayerSite& layer,
                   const std::string& prefix, ExpertWeights& e) {
  const int64_t h = c.hidden_size, i = c.moe_intermediate_size;
  DI_ASSIGN_OR_RETURN(e.w1, w.linear(layer_names(layer, {prefix + "w1.weight"}), i, h));
  DI_ASSIGN_OR_RETURN(e.w2, w.linear(layer_names(layer, {prefix + "w2.weight"}), h, i));
  DI_ASSIGN_OR_RETURN(e.w3, w.linear(layer_names(layer, {prefix + "w3.weight"}), i, h));
  return Status::ok();
}

Status load_layer(WeightLoader& w, const DeepseekV4Config& c, const LayerSite& l, LayerWeights& L) {
  const int64_t h = c.hidden_size, nh = c.num_attention_heads, hd = c.head_dim;
  DI_ASSIGN_OR_RETURN(L.attn_norm, w.f32(layer_names(l, {"attn_norm.weight"}), {h}));
  DI_ASSIGN_OR_RETURN(L.ffn_norm, w.f32(layer_names(l, {"ffn_norm.weight"}), {h}));
  DI_RETURN_IF_ERROR(load_hc(w, c, l, "attn", L.hc_attn));
  DI_RETURN_IF_ERROR(load_hc(w, c, l, "ffn", L.hc_ffn));

  AttentionWeights& a = L.attn;
  DI_ASSIGN_OR_RETURN(a.wq_a, w.linear(layer_names(l, {"attn.wq_a.weight"}), c.q_lora_rank, h));
  DI_ASSIGN_OR_RETURN(a.q_norm, w.f32(layer_names(l, {"attn.q_norm.weight"}), {c.q_lora_rank}));
  DI_ASSIGN_OR_RETURN(a.wq_b, w.linear(layer_names(l, {"attn.wq_b.weight"}), nh * hd, c.q_lora_rank));
  DI_ASSIGN_OR_RETURN(a.wkv, w.linear(layer_names(l, {"attn.wkv.weight"}), hd, h));
  // DeepSeek writes kv_norm; save_pretrained's reverse renaming writes norm.
  DI_ASSIGN_OR_RETURN(a.kv_norm, w.f32(layer_names(l, {"attn.kv_norm.weight", "attn.norm.weight"}), {hd}));
  DI_ASSIGN_OR_RETURN(a.wo_a, w.linear(layer_names(l, {"attn.wo_a.weight"}),
                                       int64_t{c.o_groups} * c.o_lora_rank, nh * hd / c.o_groups));
  DI_ASSIGN_OR_RETURN(a.wo_b, w.linear(layer_names(l, {"attn.wo_b.weight"}), h, int64_t{c.o_groups} * c.o_lora_rank));
  DI_ASSIGN_OR_RETURN(a.sinks, w.f32(layer_names(l, {"attn.attn_sink"}), {nh}));
  const AttnType type = l.attn;
  if (type != AttnType::kSliding) {
    const bool csa = type == AttnType::kCSA;
    DI_RETURN_IF_ERROR(load_compressor(w, c, l, "attn.compressor.", c.head_dim, c.compress_rate(type), csa,
                                       a.compressor));
    if (csa) {
      DI_RETURN_IF_ERROR(load_compressor(w, c, l, "attn.indexer.compressor.", c.index_head_dim,
                                         c.compress_rate_csa, true, a.indexer));
      DI_ASSIGN_OR_RETURN(a.index_wq_b, w.linear(layer_names(l, {"attn.indexer.wq_b.weight"}),
                                                 int64_t{c.index_n_heads} * c.index_head_dim, c.q_lora_rank));
      DI_ASSIGN_OR_RETURN(a.index_weights_proj,
                          w.f32(layer_names(l, {"attn.indexer.weights_proj.weight"}), {c.index_n_heads, h}));
    }
  }

  MoeWeights& m = L.ffn;
  DI_ASSIGN_OR_RETURN(m.gate, w.f32(layer_names(l, {"ffn.gate.weight"}), {c.n_routed_experts, h}));
  if (l.mlp == MlpType::kHashMoe) {
    DI_ASSIGN_OR_RETURN(m.tid2eid, w.i32(layer_names(l, {"ffn.gate.tid2eid"}), {c.vocab_size, c.num_experts_per_tok}));
    for (int64_t i = 0; i < c.vocab_size * c.num_experts_per_tok; ++i)
      if (m.tid2eid[i] < 0 || m.tid2eid[i] >= c.n_routed_experts)
        return Status::invalid_argument("tensor '" + l.label + ".ffn.gate.tid2eid': expert " +
                                        std::to_string(m.tid2eid[i]) + " is outside [0, n_routed_experts=" +
                                        std::to_string(c.n_routed_experts) + ")");
  } else {
    DI_ASSIGN_OR_RETURN(m.bias, w.f32(layer_names(l, {"ffn.gate.bias"}), {c.n_routed_experts}));
  }
  m.experts.resize(c.n_routed_experts);
  for (int32_t e = 0; e < c.n_routed_experts; ++e)
    DI_RETURN_IF_ERROR(load_expert(w, c, l, "ffn.experts." + std::to_string(e) + ".", m.experts[e]));
  DI_RETURN_IF_ERROR(load_expert(w, c, l, "ffn.shared_experts.", m.shared));
  return Status::ok();
}

Status load_mtp_layer(WeightLoader& w, const DeepseekV4Config& c, int32_t k, MtpLayerWeights& m) {
  const LayerSite site = mtp_layer(k);
  const int64_t h = c.hidden_size;
  DI_RETURN_IF_ERROR(load_layer(w, c, site, m.block));
  DI_ASSIGN_OR_RETURN(m.e_proj, w.linear(layer_names(site, {"e_proj.weight"}), h, h));
  DI_ASSIGN_OR_RETURN(m.h_proj, w.linear(layer_names(site, {"h_proj.weight"}), h, h));
  DI_ASSIGN_OR_RETURN(m.enorm, w.f32(layer_names(site, {"enorm.weight"}), {h}));
  DI_ASSIGN_OR_RETURN(m.hnorm, w.f32(layer_names(site, {"hnorm.weight"}), {h}));
  DI_ASSIGN_OR_RETURN(m.norm, w.f32(layer_names(site, {"norm.weight"}), {h}));
  DI_ASSIGN_OR_RETURN(m.hc_head_fn, w.f32(layer_names(site, {"hc_head_fn"}), {c.hc_mult, c.hc_mult * h}));
  DI_ASSIGN_OR_RETURN(m.hc_head_base, w.f32(layer_names(site, {"hc_head_base"}), {c.hc_mult}));
  DI_ASSIGN_OR_RETURN(m.hc_head_scale, w.f32(layer_names(site, {"hc_head_scale"}), {1}));
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<DeepseekV4Weights>> load_weights(const std::string& model_dir,
                                                         const DeepseekV4Config& c, bool for_device) {
  auto weights = std::make_unique<DeepseekV4Weights>();
  DI_ASSIGN_OR_RETURN(weights->store.checkpoint, Checkpoint::open(model_dir));
  WeightLoader w(weights->store, "deepseek_v4");
  w.set_quant(c.quant);
  w.keep_bf16(for_device);
  const int64_t h = c.hidden_size, v = c.vocab_size;
  // The embedding and lm_head as the CPU model reads them (fp32), or for a device as stored.
  auto vocab_matrix = [&](const Names& names, const float** f32, kernels::LinearWeight* stored) -> Status {
    const TensorView* t = for_device ? weights->store.checkpoint->find(w.pick(names)) : nullptr;
    if (t && t->dtype == DType::kBF16) {
      DI_ASSIGN_OR_RETURN(*stored, w.linear(names, v, h));
      return Status::ok();
    }
    DI_ASSIGN_OR_RETURN(*f32, w.f32(names, {v, h}));
    return Status::ok();
  };
  DI_RETURN_IF_ERROR(vocab_matrix({"model.embed_tokens.weight", "embed.weight", "model.embed.weight"}, &weights->embed,
                                  &weights->embed_stored));
  const Names head = {"head.weight", "lm_head.weight", "model.head.weight"};
  if (c.tie_word_embeddings && w.pick(head).empty()) {
    weights->head = weights->embed;
    weights->head_stored = weights->embed_stored;
  } else {
    DI_RETURN_IF_ERROR(vocab_matrix(head, &weights->head, &weights->head_stored));
  }
  DI_ASSIGN_OR_RETURN(weights->norm, w.f32({"model.norm.weight", "norm.weight"}, {h}));
  DI_ASSIGN_OR_RETURN(weights->hc_head_fn, w.f32({"model.hc_head.hc_fn", "hc_head_fn", "model.hc_head_fn"},
                                                 {c.hc_mult, c.hc_mult * h}));
  DI_ASSIGN_OR_RETURN(weights->hc_head_base, w.f32({"model.hc_head.hc_base", "hc_head_base", "model.hc_head_base"},
                                                   {c.hc_mult}));
  DI_ASSIGN_OR_RETURN(weights->hc_head_scale, w.f32({"model.hc_head.hc_scale", "hc_head_scale", "model.hc_head_scale"},
                                                    {1}));
  weights->layers.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l)
    DI_RETURN_IF_ERROR(load_layer(w, c, main_layer(c, l), weights->layers[l]));
  Names mtp_prefixes;
  for (int32_t i = 0; i < c.num_nextn_predict_layers; ++i) {
    mtp_prefixes.push_back("mtp." + std::to_string(i) + ".");
    mtp_prefixes.push_back("model.mtp." + std::to_string(i) + ".");
  }
  weights->mtp = w.take_prefix(mtp_prefixes);
  DI_RETURN_IF_ERROR(w.check_all_taken());
  // The MTP layers as a decoder can run them, read from the same mapping by a loader of their
  // own (the views above stay for the memory plan). A checkpoint whose MTP tensors do not form
  // whole layers still loads; only speculative decoding is unavailable, for the reason recorded.
  if (c.num_nextn_predict_layers > 0) {
    WeightLoader mw(weights->store, "deepseek_v4");
    mw.set_quant(c.quant);
    mw.keep_bf16(for_device);
    weights->mtp_layers.resize(c.num_nextn_predict_layers);
    for (int32_t k = 0; k < c.num_nextn_predict_layers; ++k) {
      const Status st = load_mtp_layer(mw, c, k, weights->mtp_layers[k]);
      if (!st.is_ok()) {
        weights->mtp_layers.clear();
        weights->mtp_unavailable = st.message();
        break;
      }
    }
  }
  return weights;
}

}  // namespace di::engine::deepseek_v4
