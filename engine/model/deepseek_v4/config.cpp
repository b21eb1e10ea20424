// parse_config for deepseek_v4: the defaults and legacy-key folding transformers 5.17 applies,
// then consistency checks the forward relies on. See config.h.
#include "engine/model/deepseek_v4/config.h"

#include <cmath>

#include "engine/model/config_fields.h"

namespace di::engine::deepseek_v4 {
namespace {

using nlohmann::json;

Status bad(const std::string& key, const std::string& why) {
  return Status::invalid_argument("config.json: " + key + ": " + why);
}

// Reads an int field into an int32 that must be >= min_value.
Status read_i32(const json& j, const std::string& key, int32_t& out, int64_t min_value) {
  DI_ASSIGN_OR_RETURN(int64_t v, config_int(j, key));
  if (v < min_value || v > INT32_MAX)
    return bad(key, "expected an integer >= " + std::to_string(min_value) + ", got " + std::to_string(v));
  out = static_cast<int32_t>(v);
  return Status::ok();
}

Status read_i32(const json& j, const std::string& key, int32_t& out, int64_t min_value, int64_t def) {
  if (!config_find(j, key)) {
    out = static_cast<int32_t>(def);
    return Status::ok();
  }
  return read_i32(j, key, out, min_value);
}

Result<AttnType> attn_type(const std::string& s, const std::string& where) {
  if (s == "sliding_attention") return AttnType::kSliding;
  if (s == "compressed_sparse_attention") return AttnType::kCSA;
  if (s == "heavily_compressed_attention") return AttnType::kHCA;
  return bad(where, "'" + s + "' is not sliding_attention, compressed_sparse_attention or "
                    "heavily_compressed_attention");
}

// One rope sub-dict; `prefix` names it in messages.
Status read_rope(const json& d, const std::string& prefix, double default_theta,
                 double default_partial, int32_t head_dim, RopeConfig& rope) {
  std::string type = "default";
  if (config_find(d, "rope_type")) {
    DI_ASSIGN_OR_RETURN(type, config_string(d, "rope_type", "default"));
  } else if (config_find(d, "type")) {
    DI_ASSIGN_OR_RETURN(type, config_string(d, "type", "default"));
  }
  if (type != "default" && type != "yarn")
    return bad(prefix + ".rope_type", "'" + type + "' is not supported (default or yarn)");
  rope.rope_type = type;
  DI_ASSIGN_OR_RETURN(rope.rope_theta, config_number(d, "rope_theta", default_theta));
  DI_ASSIGN_OR_RETURN(double partial, config_number(d, "partial_rotary_factor", default_partial));
  rope.dim = static_cast<int32_t>(static_cast<double>(head_dim) * partial);
  if (rope.dim <= 0 || rope.dim % 2 || rope.dim > head_dim)
    return bad(prefix + ".partial_rotary_factor",
               "gives " + std::to_string(rope.dim) + " rotated channels; expected an even number in "
               "[2, head_dim=" + std::to_string(head_dim) + "]");
  if (rope.rope_theta <= 0) return bad(prefix + ".rope_theta", "must be positive");
  if (type == "yarn") {
    if (!config_find(d, "original_max_position_embeddings"))
      return bad(prefix + ".original_max_position_embeddings", "missing (yarn needs it)");
    DI_ASSIGN_OR_RETURN(rope.original_max_position_embeddings,
                        config_number(d, "original_max_position_embeddings"));
    DI_ASSIGN_OR_RETURN(rope.factor, config_number(d, "factor", 0.0));
    DI_ASSIGN_OR_RETURN(rope.beta_fast, config_number(d, "beta_fast", 32.0));
    DI_ASSIGN_OR_RETURN(rope.beta_slow, config_number(d, "beta_slow", 1.0));
    DI_ASSIGN_OR_RETURN(rope.attention_factor, config_number(d, "attention_factor", -1.0));
    if (rope.original_max_position_embeddings <= 0)
      return bad(prefix + ".original_max_position_embeddings", "must be positive");
  }
  return Status::ok();
}

}  // namespace

Result<DeepseekV4Config> parse_config(const json& j) {
  DeepseekV4Config c;
  DI_ASSIGN_OR_RETURN(c.vocab_size, config_int(j, "vocab_size"));
  DI_ASSIGN_OR_RETURN(c.hidden_size, config_int(j, "hidden_size"));
  if (c.vocab_size < 1) return bad("vocab_size", "must be >= 1");
  if (c.hidden_size < 1) return bad("hidden_size", "must be >= 1");
  DI_RETURN_IF_ERROR(read_i32(j, "num_hidden_layers", c.num_hidden_layers, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "num_attention_heads", c.num_attention_heads, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "head_dim", c.head_dim, 2));
  DI_RETURN_IF_ERROR(read_i32(j, "q_lora_rank", c.q_lora_rank, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "o_groups", c.o_groups, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "o_lora_rank", c.o_lora_rank, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "moe_intermediate_size", c.moe_intermediate_size, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "n_routed_experts", c.n_routed_experts, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "num_experts_per_tok", c.num_experts_per_tok, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "n_shared_experts", c.n_shared_experts, 0, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "sliding_window", c.sliding_window, 1));
  DI_RETURN_IF_ERROR(read_i32(j, "hc_mult", c.hc_mult, 1));
  if (c.hc_mult > 16) return bad("hc_mult", "at most 16 streams are supported, got " + std::to_string(c.hc_mult));
  DI_RETURN_IF_ERROR(read_i32(j, "hc_sinkhorn_iters", c.hc_sinkhorn_iters, 1, 20));
  DI_RETURN_IF_ERROR(read_i32(j, "num_nextn_predict_layers", c.num_nextn_predict_layers, 0, 1));
  DI_ASSIGN_OR_RETURN(c.max_position_embeddings, config_int(j, "max_position_embeddings", 1048576));
  DI_ASSIGN_OR_RETURN(c.rms_norm_eps, config_number(j, "rms_norm_eps", 1e-6));
  DI_ASSIGN_OR_RETURN(c.hc_eps, config_number(j, "hc_eps", 1e-6));
  DI_ASSIGN_OR_RETURN(c.swiglu_limit, config_number(j, "swiglu_limit", 10.0));
  DI_ASSIGN_OR_RETURN(c.routed_scaling_factor, config_number(j, "routed_scaling_factor", 1.5));
  DI_ASSIGN_OR_RETURN(c.tie_word_embeddings, config_bool(j, "tie_word_embeddings", false));
  if (c.num_experts_per_tok > c.n_routed_experts)
    return bad("num_experts_per_tok", "exceeds n_routed_experts (" + std::to_string(c.n_routed_experts) + ")");
  if (c.num_attention_heads % c.o_groups)
    return bad("o_groups", std::to_string(c.o_groups) + " does not divide num_attention_heads (" +
                               std::to_string(c.num_attention_heads) + ")");
  DI_ASSIGN_OR_RETURN(int64_t kv_heads, config_int(j, "num_key_value_heads", 1));
  if (kv_heads != 1) return bad("num_key_value_heads", "deepseek_v4 shares one KV head; got " + std::to_string(kv_heads));
  DI_ASSIGN_OR_RETURN(std::string act, config_string(j, "hidden_act", "silu"));
  if (act != "silu") return bad("hidden_act", "only silu is supported, got '" + act + "'");
  DI_ASSIGN_OR_RETURN(std::string scoring, config_string(j, "scoring_func", "sqrtsoftplus"));
  if (scoring == "sqrtsoftplus") c.scoring_func = ScoringFunc::kSqrtSoftplus;
  else if (scoring == "sigmoid") c.scoring_func = ScoringFunc::kSigmoid;
  else if (scoring == "softmax") c.scoring_func = ScoringFunc::kSoftmax;
  else return bad("scoring_func", "'" + scoring + "' is not sqrtsoftplus, sigmoid or softmax");

  // Compression rates: the dict, then the legacy scalar overrides.
  if (const json* rates = config_find(j, "compress_rates")) {
    if (!rates->is_object()) return bad("compress_rates", "expected an object");
    DI_ASSIGN_OR_RETURN(int64_t csa, config_int(*rates, "compressed_sparse_attention", 4));
    DI_ASSIGN_OR_RETURN(int64_t hca, config_int(*rates, "heavily_compressed_attention", 128));
    c.compress_rate_csa = static_cast<int32_t>(csa);
    c.compress_rate_hca = static_cast<int32_t>(hca);
  }
  DI_RETURN_IF_ERROR(read_i32(j, "compress_rate_csa", c.compress_rate_csa, 1, c.compress_rate_csa));
  DI_RETURN_IF_ERROR(read_i32(j, "compress_rate_hca", c.compress_rate_hca, 1, c.compress_rate_hca));
  if (c.compress_rate_csa < 1) return bad("compress_rates.compressed_sparse_attention", "must be >= 1");
  if (c.compress_rate_hca < 1) return bad("compress_rates.heavily_compressed_attention", "must be >= 1");

  // Attention schedule: layer_types > legacy compress_ratios (0/4/128 per layer) > the default.
  const int32_t n = c.num_hidden_layers;
  if (const json* lt = config_find(j, "layer_types")) {
    if (!lt->is_array()) return bad("layer_types", "expected an array of strings");
    for (size_t i = 0; i < lt->size(); ++i) {
      const std::string where = "layer_types[" + std::to_string(i) + "]";
      if (!(*lt)[i].is_string()) return bad(where, "expected a string");
      DI_ASSIGN_OR_RETURN(AttnType t, attn_type((*lt)[i].get<std::string>(), where));
      c.layer_types.push_back(t);
    }
  } else if (const json* cr = config_find(j, "compress_ratios")) {
    if (!cr->is_array()) return bad("compress_ratios", "expected an array of integers");
    for (size_t i = 0; i < cr->size(); ++i) {
      const std::string where = "compress_ratios[" + std::to_string(i) + "]";
      if (!(*cr)[i].is_number_integer()) return bad(where, "expected 0, 4 or 128");
      const int64_t r = (*cr)[i].get<int64_t>();
      if (r == 0) c.layer_types.push_back(AttnType::kSliding);
      else if (r == 4) c.layer_types.push_back(AttnType::kCSA);
      else if (r == 128) c.layer_types.push_back(AttnType::kHCA);
      else return bad(where, "expected 0, 4 or 128, got " + std::to_string(r));
    }
  } else {
    for (int32_t i = 0; i < n; ++i)
      c.layer_types.push_back(i < 2 ? AttnType::kHCA : (i - 2) % 2 ? AttnType::kCSA : AttnType::kHCA);
  }
  if (static_cast<int32_t>(c.layer_types.size()) < n)
    return bad("layer_types", "has " + std::to_string(c.layer_types.size()) +
                                  " entries for num_hidden_layers=" + std::to_string(n));
  c.layer_types.resize(n);

  // MoE schedule: mlp_layer_types > legacy num_hash_layers (default 3) hash layers first.
  if (const json* mt = config_find(j, "mlp_layer_types")) {
    if (!mt->is_array()) return bad("mlp_layer_types", "expected an array of strings");
    for (size_t i = 0; i < mt->size(); ++i) {
      const std::string where = "mlp_layer_types[" + std::to_string(i) + "]";
      const std::string s = (*mt)[i].is_string() ? (*mt)[i].get<std::string>() : "";
      if (s == "hash_moe") c.mlp_layer_types.push_back(MlpType::kHashMoe);
      else if (s == "moe") c.mlp_layer_types.push_back(MlpType::kMoe);
      else return bad(where, "expected \"hash_moe\" or \"moe\", got " + (*mt)[i].dump());
    }
  } else {
    DI_ASSIGN_OR_RETURN(int64_t hash, config_int(j, "num_hash_layers", 3));
    if (hash < 0) return bad("num_hash_layers", "must be >= 0");
    for (int32_t i = 0; i < n; ++i)
      c.mlp_layer_types.push_back(i < hash ? MlpType::kHashMoe : MlpType::kMoe);
  }
  if (static_cast<int32_t>(c.mlp_layer_types.size()) < n)
    return bad("mlp_layer_types", "has " + std::to_string(c.mlp_layer_types.size()) +
                                      " entries for num_hidden_layers=" + std::to_string(n));
  c.mlp_layer_types.resize(n);

  bool has_csa = false;
  for (AttnType t : c.layer_types) has_csa |= t == AttnType::kCSA;
  if (has_csa) {
    DI_RETURN_IF_ERROR(read_i32(j, "index_n_heads", c.index_n_heads, 1));
    DI_RETURN_IF_ERROR(read_i32(j, "index_head_dim", c.index_head_dim, 2));
    DI_RETURN_IF_ERROR(read_i32(j, "index_topk", c.index_topk, 1));
  }

  // Partial rope: partial_rotary_factor > legacy qk_rope_head_dim / head_dim > 64/512.
  double partial = 64.0 / 512.0;
  const json* prf = config_find(j, "partial_rotary_factor");
  const json* qk_rope = config_find(j, "qk_rope_head_dim");
  if (prf) {
    DI_ASSIGN_OR_RETURN(partial, config_number(j, "partial_rotary_factor"));
  } else if (qk_rope) {
    DI_ASSIGN_OR_RETURN(int64_t rd, config_int(j, "qk_rope_head_dim"));
    partial = static_cast<double>(rd) / c.head_dim;
  }
  c.qk_rope_head_dim = static_cast<int32_t>(c.head_dim * partial);
  if (prf && qk_rope) {
    DI_ASSIGN_OR_RETURN(int64_t rd, config_int(j, "qk_rope_head_dim"));
    if (rd != c.qk_rope_head_dim)
      return bad("qk_rope_head_dim", std::to_string(rd) + " disagrees with partial_rotary_factor * head_dim = " +
                                         std::to_string(c.qk_rope_head_dim));
  }

  // Rope: nested {main, compress}, or a flat dict (rope_parameters or legacy rope_scaling) whose
  // scaling applies to the compressed layers only; the sliding layers use plain rope_theta.
  DI_ASSIGN_OR_RETURN(double rope_theta, config_number(j, "rope_theta", 10000.0));
  DI_ASSIGN_OR_RETURN(double compress_theta, config_number(j, "compress_rope_theta", 160000.0));
  const json* rp = config_find(j, "rope_parameters");
  if (!rp) rp = config_find(j, "rope_scaling");
  if (rp && !rp->is_object()) return bad("rope_parameters", "expected an object");
  if (rp && rp->contains("main") && rp->contains("compress") && (*rp)["main"].is_object() &&
      (*rp)["compress"].is_object()) {
    DI_RETURN_IF_ERROR(read_rope((*rp)["main"], "rope_parameters.main", rope_theta, 1.0, c.head_dim, c.rope_main));
    DI_RETURN_IF_ERROR(read_rope((*rp)["compress"], "rope_parameters.compress", compress_theta, 1.0,
                                 c.head_dim, c.rope_compress));
  } else {
    json main = {{"rope_type", "default"}, {"rope_theta", rope_theta}, {"partial_rotary_factor", partial}};
    json compress = json::object();
    if (rp)
      for (auto it = rp->begin(); it != rp->end(); ++it)
        if (it.key() != "main" && it.key() != "compress") compress[it.key()] = *it;
    compress["rope_theta"] = compress_theta;
    compress["partial_rotary_factor"] = partial;
    DI_RETURN_IF_ERROR(read_rope(main, "rope_parameters", rope_theta, partial, c.head_dim, c.rope_main));
    DI_RETURN_IF_ERROR(read_rope(compress, "rope_parameters", compress_theta, partial, c.head_dim, c.rope_compress));
    // transformers pins yarn's attention factor to 1 for V4 unless the config gives one.
    if (c.rope_compress.rope_type == "yarn" && c.rope_compress.attention_factor < 0)
      c.rope_compress.attention_factor = 1.0;
  }
  for (RopeConfig* r : {&c.rope_main, &c.rope_compress}) {
    if (r->rope_type != "yarn") {
      r->attention_factor = 1.0;
      continue;
    }
    if (r->factor <= 0) r->factor = static_cast<double>(c.max_position_embeddings) / r->original_max_position_embeddings;
    if (r->attention_factor < 0)  // yarn's default: 0.1 ln(factor) + 1
      r->attention_factor = r->factor <= 1 ? 1.0 : 0.1 * std::log(r->factor) + 1.0;
  }
  if (has_csa && c.rope_compress.dim > c.index_head_dim)
    return bad("index_head_dim", std::to_string(c.index_head_dim) + " is smaller than the " +
                                     std::to_string(c.rope_compress.dim) + " rotated channels");

  DI_RETURN_IF_ERROR(config_token_ids(j, &c.bos_token_id, &c.eos_token_ids));
  DI_ASSIGN_OR_RETURN(c.quant, parse_quant_config(j));
  return c;
}

}  // namespace di::engine::deepseek_v4
