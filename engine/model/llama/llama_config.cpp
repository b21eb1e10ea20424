// parse_llama_config: see llama_config.h. Defaults follow transformers 5.17's LlamaConfig,
// Qwen2Config and Qwen3Config.
#include "engine/model/llama/llama_config.h"

#include "engine/model/config_fields.h"

namespace di::engine::llama {
namespace {

using nlohmann::json;

Status bad(const std::string& key, const std::string& why) {
  return Status::invalid_argument("config.json: " + key + ": " + why);
}

Status read_positive(const json& j, const std::string& key, int32_t& out) {
  DI_ASSIGN_OR_RETURN(int64_t v, config_int(j, key));
  if (v < 1 || v > INT32_MAX) return bad(key, "expected a positive integer, got " + std::to_string(v));
  out = static_cast<int32_t>(v);
  return Status::ok();
}

}  // namespace

Result<LlamaConfig> parse_llama_config(const json& j) {
  LlamaConfig c;
  DI_ASSIGN_OR_RETURN(c.model_type, config_string(j, "model_type", ""));
  if (c.model_type != "llama" && c.model_type != "qwen2" && c.model_type != "qwen3")
    return bad("model_type", "'" + c.model_type + "' is not llama, qwen2 or qwen3");
  DI_ASSIGN_OR_RETURN(c.vocab_size, config_int(j, "vocab_size"));
  if (c.vocab_size < 1) return bad("vocab_size", "expected a positive integer");
  DI_RETURN_IF_ERROR(read_positive(j, "hidden_size", c.hidden_size));
  DI_RETURN_IF_ERROR(read_positive(j, "intermediate_size", c.intermediate_size));
  DI_RETURN_IF_ERROR(read_positive(j, "num_hidden_layers", c.num_hidden_layers));
  DI_RETURN_IF_ERROR(read_positive(j, "num_attention_heads", c.num_attention_heads));
  c.num_key_value_heads = c.num_attention_heads;
  if (config_find(j, "num_key_value_heads")) DI_RETURN_IF_ERROR(read_positive(j, "num_key_value_heads", c.num_key_value_heads));
  if (c.num_attention_heads % c.num_key_value_heads)
    return bad("num_key_value_heads", std::to_string(c.num_key_value_heads) + " does not divide num_attention_heads " +
                                          std::to_string(c.num_attention_heads));
  // Qwen3Config's head_dim defaults to 128; the others derive it from hidden_size.
  const int64_t default_head_dim = c.model_type == "qwen3" ? 128 : c.hidden_size / c.num_attention_heads;
  if (config_find(j, "head_dim")) {
    DI_RETURN_IF_ERROR(read_positive(j, "head_dim", c.head_dim));
  } else {
    c.head_dim = static_cast<int32_t>(default_head_dim);
  }
  if (c.head_dim < 2 || c.head_dim % 2) return bad("head_dim", "expected an even number >= 2, got " + std::to_string(c.head_dim));
  DI_ASSIGN_OR_RETURN(c.rms_norm_eps, config_number(j, "rms_norm_eps", 1e-6));
  DI_ASSIGN_OR_RETURN(c.max_position_embeddings, config_int(j, "max_position_embeddings", 2048));
  DI_ASSIGN_OR_RETURN(std::string act, config_string(j, "hidden_act", "silu"));
  if (act != "silu") return bad("hidden_act", "'" + act + "' is not supported (silu)");
  DI_ASSIGN_OR_RETURN(c.tie_word_embeddings, config_bool(j, "tie_word_embeddings", false));

  if (c.model_type == "qwen2") {
    c.qkv_bias = true;  // Qwen2Attention always has q/k/v biases and none on o_proj
  } else {
    DI_ASSIGN_OR_RETURN(bool attention_bias, config_bool(j, "attention_bias", false));
    c.qkv_bias = c.o_bias = attention_bias;
  }
  if (c.model_type == "llama") {
    DI_ASSIGN_OR_RETURN(c.mlp_bias, config_bool(j, "mlp_bias", false));
  }
  c.qk_norm = c.model_type == "qwen3";

  if (c.model_type != "llama") {
    // Sliding-window layers need a windowed mask and ring cache this family does not declare.
    DI_ASSIGN_OR_RETURN(bool sliding, config_bool(j, "use_sliding_window", false));
    if (sliding) return Status::unsupported("config.json: use_sliding_window: true is not supported");
    if (const json* types = config_find(j, "layer_types")) {
      if (!types->is_array()) return bad("layer_types", "expected a list");
      for (size_t i = 0; i < types->size(); ++i)
        if (!(*types)[i].is_string() || (*types)[i].get<std::string>() != "full_attention")
          return Status::unsupported("config.json: layer_types[" + std::to_string(i) + "]: " + (*types)[i].dump() +
                                     " is not supported (full_attention)");
    }
  }
  DI_ASSIGN_OR_RETURN(double partial, config_number(j, "partial_rotary_factor", 1.0));
  if (partial != 1.0) return Status::unsupported("config.json: partial_rotary_factor: only 1.0 is supported");
  DI_ASSIGN_OR_RETURN(c.rope, parse_rope_config(j, c.head_dim, c.max_position_embeddings));
  DI_RETURN_IF_ERROR(config_token_ids(j, &c.bos_token_id, &c.eos_token_ids));
  return c;
}

}  // namespace di::engine::llama
