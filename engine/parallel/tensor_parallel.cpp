#include "engine/parallel/tensor_parallel.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace di::engine::parallel {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string t = "[";
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + s(shape[i]);
  return t + "]";
}

// What a module's weight does under tensor parallelism; its bias follows (column: split the
// same way, row: added once).
enum class Rule { kReplicated, kColumnByHead, kColumnByKvHead, kColumnEven, kRowByHead, kRowEven, kExpert, kUnknown };

// `module` is the name without its parameter ("model.layers.3.self_attn.q_proj").
Rule rule_for(std::string_view module) {
  if (module == "model.norm") return Rule::kReplicated;
  if (module == "model.embed_tokens" || module == "lm_head") return Rule::kColumnEven;  // vocabulary rows
  constexpr std::string_view kLayers = "model.layers.";
  if (module.substr(0, kLayers.size()) != kLayers) return Rule::kUnknown;
  std::string_view rest = module.substr(kLayers.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return Rule::kUnknown;
  for (size_t i = 0; i < dot; ++i) {
    if (rest[i] < '0' || rest[i] > '9') return Rule::kUnknown;
  }
  std::string_view m = rest.substr(dot + 1);
  if (m.substr(0, 12) == "mlp.experts.") return Rule::kExpert;
  struct Entry {
    std::string_view module;
    Rule rule;
  };
  static constexpr Entry kRules[] = {
      {"input_layernorm", Rule::kReplicated},
      {"post_attention_layernorm", Rule::kReplicated},
      {"self_attn.q_proj", Rule::kColumnByHead},
      {"self_attn.k_proj", Rule::kColumnByKvHead},
      {"self_attn.v_proj", Rule::kColumnByKvHead},
      {"self_attn.o_proj", Rule::kRowByHead},
      {"self_attn.q_norm", Rule::kReplicated},  // qwen3: one head_dim vector, shared by all heads
      {"self_attn.k_norm", Rule::kReplicated},
      // MLA: the low-rank down projections and their norms are small and every head reads them.
      {"self_attn.q_a_proj", Rule::kReplicated},
      {"self_attn.q_a_layernorm", Rule::kReplicated},
      {"self_attn.kv_a_proj_with_mqa", Rule::kReplicated},
      {"self_attn.kv_a_layernorm", Rule::kReplicated},
      {"self_attn.q_b_proj", Rule::kColumnByHead},
      {"self_attn.kv_b_proj", Rule::kColumnByHead},  // per query head: k_nope and v
      {"mlp.gate_proj", Rule::kColumnEven},
      {"mlp.up_proj", Rule::kColumnEven},
      {"mlp.down_proj", Rule::kRowEven},
      // Shared experts are a dense MLP of n_shared_experts * moe_intermediate_size: split like one.
      {"mlp.shared_experts.gate_proj", Rule::kColumnEven},
      {"mlp.shared_experts.up_proj", Rule::kColumnEven},
      {"mlp.shared_experts.down_proj", Rule::kRowEven},
      {"mlp.gate", Rule::kReplicated},  // the MoE router: every rank routes every token
  };
  for (const Entry& e : kRules) {
    if (m == e.module) return e.rule;
  }
  return Rule::kUnknown;
}

// Splits `size` into `units` equal parts and keeps [unit_begin, unit_begin + unit_count).
Result<TensorShard> split(const std::string& name, const std::vector<int64_t>& shape, int32_t dim, ShardKind kind,
                          int64_t units, int64_t unit_begin, int64_t unit_count, const char* unit_label) {
  if (static_cast<int64_t>(shape.size()) <= dim) {
    return Status::invalid_argument(name + ": expected at least " + s(dim + 1) + " dimensions to split dim " +
                                    s(dim) + ", got shape " + shape_text(shape));
  }
  const int64_t size = shape[static_cast<size_t>(dim)];
  if (units <= 0 || size % units != 0) {
    return Status::invalid_argument(name + ": dim " + s(dim) + " of shape " + shape_text(shape) +
                                    " does not split into " + s(units) + " " + unit_label);
  }
  const int64_t per = size / units;
  TensorShard t;
  t.kind = kind;
  t.dim = dim;
  t.begin = unit_begin * per;
  t.count = unit_count * per;
  t.shape = shape;
  t.shape[static_cast<size_t>(dim)] = t.count;
  return t;
}

}  // namespace

Result<TpPlan> plan_tensor_parallel(const TpGeometry& g, int32_t tp_rank, int32_t tp_size, VocabSharding vocab) {
  if (tp_size < 1) return Status::invalid_argument("tp_size: expected >= 1, got " + s(tp_size));
  if (tp_rank < 0 || tp_rank >= tp_size) {
    return Status::invalid_argument("tp_rank: expected 0.." + s(tp_size - 1) + ", got " + s(tp_rank));
  }
  if (g.num_attention_heads <= 0 || g.num_key_value_heads <= 0) {
    return Status::invalid_argument("num_attention_heads / num_key_value_heads: expected > 0, got " +
                                    s(g.num_attention_heads) + " / " + s(g.num_key_value_heads));
  }
  if (g.num_attention_heads % tp_size != 0) {
    return Status::invalid_argument("num_attention_heads " + s(g.num_attention_heads) +
                                    " is not divisible by tp_size " + s(tp_size));
  }
  if (g.vocab_size <= 0) return Status::invalid_argument("vocab_size: expected > 0, got " + s(g.vocab_size));
  TpPlan p;
  p.tp_rank = tp_rank;
  p.tp_size = tp_size;
  p.full = g;
  p.num_heads = g.num_attention_heads / tp_size;
  p.head_begin = tp_rank * p.num_heads;
  if (g.num_key_value_heads % tp_size == 0) {
    p.num_kv_heads = g.num_key_value_heads / tp_size;
    p.kv_head_begin = tp_rank * p.num_kv_heads;
  } else if (tp_size % g.num_key_value_heads == 0) {
    // More ranks than kv heads: consecutive ranks share one, the one their query heads read
    // (query head h reads kv head h / (heads / kv_heads)).
    p.kv_replicas = tp_size / g.num_key_value_heads;
    p.num_kv_heads = 1;
    p.kv_head_begin = tp_rank / p.kv_replicas;
  } else {
    return Status::invalid_argument("num_key_value_heads " + s(g.num_key_value_heads) +
                                    " neither divides nor is divisible by tp_size " + s(tp_size));
  }
  p.vocab = vocab;
  if (vocab == VocabSharding::kVocabParallel) {
    p.vocab_rows_padded = (g.vocab_size + tp_size - 1) / tp_size;
    p.vocab_begin = std::min<int64_t>(tp_rank * p.vocab_rows_padded, g.vocab_size);
    p.vocab_rows = std::min<int64_t>(p.vocab_rows_padded, g.vocab_size - p.vocab_begin);
  } else {
    p.vocab_rows = p.vocab_rows_padded = g.vocab_size;
  }
  return p;
}

Result<TensorShard> shard_tensor(const TpPlan& p, const std::string& name, const std::vector<int64_t>& shape) {
  const size_t last_dot = name.rfind('.');
  if (last_dot == std::string::npos) return Status::invalid_argument(name + ": expected <module>.<parameter>");
  const std::string_view module = std::string_view(name).substr(0, last_dot);
  const std::string_view param = std::string_view(name).substr(last_dot + 1);
  const Rule rule = rule_for(module);
  if (rule == Rule::kUnknown) return Status::not_found(name + ": no tensor-parallel rule for this tensor");
  if (rule == Rule::kExpert) {
    return Status::unsupported(name + ": routed experts are placed whole by expert parallelism, not split by tp");
  }
  const bool bias = param == "bias" || param == "e_score_correction_bias";
  if (param != "weight" && !bias) {
    // fp8 block scales and the like would split with their weight's blocks; not handled yet.
    return Status::unsupported(name + ": no tensor-parallel rule for parameter '" + std::string(param) + "'");
  }
  TensorShard whole;
  whole.shape = shape;
  whole.count = shape.empty() ? 1 : shape[0];
  const int64_t tp = p.tp_size;
  switch (rule) {
    case Rule::kReplicated:
      return whole;
    case Rule::kColumnByHead:
      return split(name, shape, 0, ShardKind::kColumnParallel, p.full.num_attention_heads, p.head_begin,
                   p.num_heads, "heads");
    case Rule::kColumnByKvHead:
      return split(name, shape, 0, ShardKind::kColumnParallel, p.full.num_key_value_heads, p.kv_head_begin,
                   p.num_kv_heads, "kv heads");
    case Rule::kColumnEven:
      if (module == "model.embed_tokens" || module == "lm_head") {
        if (p.vocab == VocabSharding::kReplicated) return whole;
        if (shape.empty() || shape[0] != p.full.vocab_size) {
          return Status::invalid_argument(name + ": expected " + s(p.full.vocab_size) + " vocabulary rows, got shape " +
                                          shape_text(shape));
        }
        TensorShard t;
        t.kind = ShardKind::kColumnParallel;
        t.dim = 0;
        t.begin = p.vocab_begin;
        t.count = p.vocab_rows;
        t.shape = shape;
        t.shape[0] = t.count;
        return t;
      }
      return split(name, shape, 0, ShardKind::kColumnParallel, tp, p.tp_rank, 1, "ranks");
    case Rule::kRowByHead:
    case Rule::kRowEven:
      if (bias) {
        whole.kind = ShardKind::kRowParallelBias;
        return whole;
      }
      if (rule == Rule::kRowByHead) {
        return split(name, shape, 1, ShardKind::kRowParallel, p.full.num_attention_heads, p.head_begin, p.num_heads,
                     "heads");
      }
      return split(name, shape, 1, ShardKind::kRowParallel, tp, p.tp_rank, 1, "ranks");
    case Rule::kExpert:
    case Rule::kUnknown:
      break;
  }
  return Status::internal(name + ": unhandled tensor-parallel rule");
}

void copy_shard(const void* full, const std::vector<int64_t>& full_shape, const TensorShard& shard,
                size_t element_size, void* out) {
  if (shard.dim < 0) {
    int64_t n = 1;
    for (int64_t d : full_shape) n *= d;
    std::memcpy(out, full, static_cast<size_t>(n) * element_size);
    return;
  }
  // View the tensor as [outer, full_shape[dim], inner] and keep [begin, begin + count) of the middle.
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < shard.dim; ++d) outer *= full_shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(shard.dim) + 1; d < full_shape.size(); ++d) inner *= full_shape[d];
  const int64_t mid = full_shape[static_cast<size_t>(shard.dim)];
  const size_t chunk = static_cast<size_t>(shard.count * inner) * element_size;
  const auto* src = static_cast<const char*>(full);
  auto* dst = static_cast<char*>(out);
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + static_cast<size_t>(o) * chunk,
                src + static_cast<size_t>((o * mid + shard.begin) * inner) * element_size, chunk);
  }
}

}  // namespace di::engine::parallel
