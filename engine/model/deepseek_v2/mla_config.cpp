// parse_mla_config: see mla_config.h. Defaults are transformers 5.17's DeepseekV2Config and
// DeepseekV3Config; the checkpoints' own spellings (scoring_func, topk_method, rope_scaling) are
// accepted where they agree with what transformers computes.
#include "engine/model/deepseek_v2/mla_config.h"

#include <cmath>

#include "engine/model/config_fields.h"

namespace di::engine::deepseek_v2 {
namespace {

using nlohmann::json;

Status bad(const std::string& key, const std::string& why) {
  return Status::invalid_argument("config.json: " + key + ": " + why);
}

Status read_i32(const json& j, const std::string& key, int32_t& out, int64_t min_value, int64_t def) {
  DI_ASSIGN_OR_RETURN(int64_t v, config_int(j, key, def));
  if (v < min_value || v > INT32_MAX)
    return bad(key, "expected an integer >= " + std::to_string(min_value) + ", got " + std::to_string(v));
  out = static_cast<int32_t>(v);
  return Status::ok();
}

Status read_routing(const json& j, MlaConfig& c) {
  DI_ASSIGN_OR_RETURN(std::string scoring, config_string(j, "scoring_func", ""));
  DI_ASSIGN_OR_RETURN(std::string method, config_string(j, "topk_method", ""));
  if (c.model_type == "deepseek_v3") {
    // transformers' DeepseekV3TopkRouter always scores with a sigmoid and routes noaux_tc.
    if (!scoring.empty() && scoring != "sigmoid")
      return Status::unsupported("config.json: scoring_func: '" + scoring + "' is not supported for deepseek_v3 (sigmoid)");
    if (!method.empty() && method != "noaux_tc")
      return Status::unsupported("config.json: topk_method: '" + method + "' is not supported for deepseek_v3 (noaux_tc)");
    c.routing = Routing::kSigmoidNoAux;
  } else {
    if (!scoring.empty() && scoring != "softmax")
      return Status::unsupported("config.json: scoring_func: '" + scoring + "' is not supported for deepseek_v2 (softmax)");
    if (method.empty() || method == "greedy") {
      c.routing = Routing::kSoftmaxGreedy;
    } else if (method == "group_limited_greedy") {
      c.routing = Routing::kSoftmaxGroupLimited;
    } else {
      return Status::unsupported("config.json: topk_method: '" + method +
                                 "' is not supported for deepseek_v2 (greedy or group_limited_greedy)");
    }
  }
  const bool grouped = c.routing != Routing::kSoftmaxGreedy;
  const int64_t def_group = c.model_type == "deepseek_v3" ? 8 : 1;
  const int64_t def_topk_group = c.model_type == "deepseek_v3" ? 4 : 1;
  DI_RETURN_IF_ERROR(read_i32(j, "n_group", c.n_group, 1, grouped ? def_group : 1));
  DI_RETURN_IF_ERROR(read_i32(j, "topk_group", c.topk_group, 1, grouped ? def_topk_group : 1));
  if (!grouped) {
    c.n_group = c.topk_group = 1;  // unused by greedy routing
  } else {
    if (c.n_routed_experts % c.n_group)
      return bad("n_group", std::to_string(c.n_group) + " does not divide n_routed_experts " + std::to_string(c.n_routed_experts));
    if (c.topk_group > c.n_group)
      return bad("topk_group", std::to_string(c.topk_group) + " exceeds n_group " + std::to_string(c.n_group));
    if (c.routing == Routing::kSigmoidNoAux && c.n_routed_experts / c.n_group < 2)
      return bad("n_group", "deepseek_v3 ranks groups by their best two experts; groups of " +
                                std::to_string(c.n_routed_experts / c.n_group) + " are too small");
    if (int64_t{c.topk_group} * (c.n_routed_experts / c.n_group) < c.num_experts_per_tok)
      return bad("topk_group", "the chosen groups hold fewer experts than num_experts_per_tok");
  }
  return Status::ok();
}

}  // namespace

Result<MlaConfig> parse_mla_config(const json& j) {
  MlaConfig c;
  DI_ASSIGN_OR_RETURN(c.model_type, config_string(j, "model_type", ""));
  const bool v3 = c.model_type == "deepseek_v3";
  if (!v3 && c.model_type != "deepseek_v2") return bad("model_type", "'" + c.model_type + "' is not deepseek_v2 or deepseek_v3");
  DI_ASSIGN_OR_RETURN(c.vocab_size, config_int(j, "vocab_size"));
  if (c.vocab_size < 1) return bad("vocab_size", "expected a positive integer");
  DI_RETURN_IF_ERROR(read_i32(j, "hidden_size", c.hidden_size, 1, v3 ? 7168 : 4096));
  DI_RETURN_IF_ERROR(read_i32(j, "intermediate_size", c.intermediate_size, 1, v3 ? 18432 : 11008));
  DI_RETURN_IF_ERROR(read_i32(j, "moe_intermediate_size", c.moe_intermediate_size, 1, v3 ? 2048 : 1407));
  DI_RETURN_IF_ERROR(read_i32(j, "num_hidden_layers", c.num_hidden_layers, 1, v3 ? 61 : 32));
  DI_RETURN_IF_ERROR(read_i32(j, "num_attention_heads", c.num_attention_heads, 1, v3 ? 128 : 32));
  DI_RETURN_IF_ERROR(read_i32(j, "q_lora_rank", c.q_lora_rank, 1, 1536));  // null reads as the default...
  if (j.contains("q_lora_rank") && j["q_lora_rank"].is_null()) c.q_lora_rank = 0;  // ...but null means none
  DI_RETURN_IF_ERROR(read_i32(j, "kv_lora_rank", c.kv_lora_rank, 1, 512));
  DI_RETURN_IF_ERROR(read_i32(j, "qk_nope_head_dim", c.qk_nope_head_dim, 1, 128));
  DI_RETURN_IF_ERROR(read_i32(j, "qk_rope_head_dim", c.qk_rope_head_dim, 2, 64));
  DI_RETURN_IF_ERROR(read_i32(j, "v_head_dim", c.v_head_dim, 1, 128));
  if (c.qk_rope_head_dim % 2) return bad("qk_rope_head_dim", "expected an even number");
  DI_RETURN_IF_ERROR(read_i32(j, "n_routed_experts", c.n_routed_experts, 0, v3 ? 256 : 64));
  DI_RETURN_IF_ERROR(read_i32(j, "n_shared_experts", c.n_shared_experts, 0, v3 ? 1 : 2));
  DI_RETURN_IF_ERROR(read_i32(j, "first_k_dense_replace", c.first_k_dense_replace, 0, v3 ? 3 : 0));
  if (c.n_routed_experts > 0) {
    if (!config_find(j, "num_experts_per_tok") && !v3) return bad("num_experts_per_tok", "missing (required with routed experts)");
    DI_RETURN_IF_ERROR(read_i32(j, "num_experts_per_tok", c.num_experts_per_tok, 1, 8));
    if (c.num_experts_per_tok > c.n_routed_experts)
      return bad("num_experts_per_tok", std::to_string(c.num_experts_per_tok) + " exceeds n_routed_experts " +
                                            std::to_string(c.n_routed_experts));
    DI_RETURN_IF_ERROR(read_routing(j, c));
  }
  DI_ASSIGN_OR_RETURN(int64_t moe_layer_freq, config_int(j, "moe_layer_freq", 1));
  if (moe_layer_freq != 1)  // transformers ignores it; every released checkpoint has 1
    return Status::unsupported("config.json: moe_layer_freq: only 1 is supported, got " + std::to_string(moe_layer_freq));
  DI_ASSIGN_OR_RETURN(c.norm_topk_prob, config_bool(j, "norm_topk_prob", v3));
  DI_ASSIGN_OR_RETURN(c.routed_scaling_factor, config_number(j, "routed_scaling_factor", v3 ? 2.5 : 1.0));
  DI_ASSIGN_OR_RETURN(c.attention_bias, config_bool(j, "attention_bias", false));
  if (!v3) {
    DI_ASSIGN_OR_RETURN(c.mlp_bias, config_bool(j, "mlp_bias", false));
  }
  DI_ASSIGN_OR_RETURN(c.rope_interleave, config_bool(j, "rope_interleave", true));
  if (!v3) c.rope_interleave = true;  // V2's rope is the complex (pairwise) form
  DI_ASSIGN_OR_RETURN(c.tie_word_embeddings, config_bool(j, "tie_word_embeddings", false));
  DI_RETURN_IF_ERROR(read_i32(j, "num_nextn_predict_layers", c.num_nextn_predict_layers, 0, 0));
  DI_ASSIGN_OR_RETURN(c.rms_norm_eps, config_number(j, "rms_norm_eps", 1e-6));
  DI_ASSIGN_OR_RETURN(c.max_position_embeddings, config_int(j, "max_position_embeddings", v3 ? 4096 : 2048));
  DI_ASSIGN_OR_RETURN(std::string act, config_string(j, "hidden_act", "silu"));
  if (act != "silu") return bad("hidden_act", "'" + act + "' is not supported (silu)");
  DI_ASSIGN_OR_RETURN(c.rope, parse_rope_config(j, c.qk_rope_head_dim, c.max_position_embeddings));

  // transformers' yarn_apply_mscale: YaRN with mscale_all_dim sharpens the softmax by mscale^2.
  c.softmax_scale = std::pow(static_cast<double>(c.qk_head_dim()), -0.5);
  if (c.rope.rope_type != "default" && c.rope.mscale_all_dim != 0.0) {
    const double m = yarn_get_mscale(c.rope.factor, c.rope.mscale_all_dim);
    c.softmax_scale *= m * m;
  }
  DI_RETURN_IF_ERROR(config_token_ids(j, &c.bos_token_id, &c.eos_token_ids));
  DI_ASSIGN_OR_RETURN(c.quant, parse_quant_config(j));
  return c;
}

}  // namespace di::engine::deepseek_v2
