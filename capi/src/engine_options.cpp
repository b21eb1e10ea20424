// di_options -> EngineConfig / ModelOptions / SamplingParams.
#include "capi/src/engine_options.h"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "capi/src/option_keys.h"
#include "capi/src/options.h"
#include "request/sampling_params.h"

namespace di::capi {
namespace {

using nlohmann::json;
using Value = di_options::Value;

Status check_scope(const di_options* options, std::string_view scope, const char* call) {
  if (!options) return Status::ok();
  for (const auto& [key, value] : options->values) {
    const OptionKey* k = find_option_key(key);
    if (!k || k->scope != scope)
      return Status::invalid_argument("option \"" + key + "\": not a" +
                                      (scope == "engine" ? "n " : " ") + std::string(scope) +
                                      " option (" + call + " reads " + std::string(scope) +
                                      "-scope keys only)");
  }
  return Status::ok();
}

const Value* find(const di_options* options, const char* key) {
  if (!options) return nullptr;
  auto it = options->values.find(key);
  return it == options->values.end() ? nullptr : &it->second;
}

double as_double(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v.v)) return static_cast<double>(*i);
  return std::get<double>(v.v);
}

int64_t as_i64(const Value& v) { return std::get<int64_t>(v.v); }

Status int32_field(const Value& v, const char* key, int32_t* out) {
  const int64_t x = as_i64(v);
  if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
    return Status::invalid_argument(std::string(key) + ": " + std::to_string(x) + " is out of range");
  *out = static_cast<int32_t>(x);
  return Status::ok();
}

Status bool_field(const Value& v, const char* key, bool* out) {
  const int64_t x = as_i64(v);
  if (x != 0 && x != 1) return Status::invalid_argument(std::string(key) + ": expected 0 or 1, got " + std::to_string(x));
  *out = x == 1;
  return Status::ok();
}

// One scalar sampling field from its di_options value (the key's type is the table's).
Status read_field(const Value& v, const request::SamplingField& f, request::SamplingParams& p) {
  return std::visit([&](auto m) -> Status {
    using T = std::remove_reference_t<decltype(p.*m)>;
    if constexpr (std::is_same_v<T, bool>) return bool_field(v, f.name, &(p.*m));
    else if constexpr (std::is_same_v<T, int32_t>) return int32_field(v, f.name, &(p.*m));
    else if constexpr (std::is_same_v<T, int64_t>) p.*m = as_i64(v);
    else p.*m = as_double(v);
    return Status::ok();
  }, f.member);
}

// The layout keys; the ranges are resolve_parallel_layout's (engine/parallel).
Status parallel_from_options(const di_options* options, engine::ParallelConfig& p) {
  const std::pair<const char*, int32_t*> ints[] = {
      {"tensor_parallel_size", &p.tensor_parallel_size}, {"expert_parallel_size", &p.expert_parallel_size},
      {"data_parallel_size", &p.data_parallel_size},     {"eplb_rebalance_interval", &p.eplb_rebalance_interval},
      {"eplb_num_redundant_experts", &p.eplb_num_redundant_experts}, {"parallel_rank", &p.rank},
      {"parallel_world_size", &p.world_size},            {"parallel_local_rank", &p.local_rank}};
  for (const auto& [key, field] : ints)
    if (const Value* v = find(options, key)) DI_RETURN_IF_ERROR(int32_field(*v, key, field));
  for (const char* key : {"parallel_rank", "parallel_world_size", "parallel_local_rank"}) {
    const Value* v = find(options, key);
    if (v && as_i64(*v) < 0) return Status::invalid_argument(std::string(key) + ": expected >= 0, got " + std::to_string(as_i64(*v)));
  }
  if (const Value* v = find(options, "eplb")) DI_RETURN_IF_ERROR(bool_field(*v, "eplb", &p.enable_eplb));
  if (const Value* v = find(options, "dp_vote")) {
    const std::string m = std::get<std::string>(v->v);
    if (m != "all" && m != "any") return Status::invalid_argument("dp_vote: expected \"all\" or \"any\", got \"" + m + "\"");
    p.dp_vote = m == "all" ? engine::DpVoteMode::kAll : engine::DpVoteMode::kAny;
  }
  if (const Value* v = find(options, "nccl_rendezvous")) p.rendezvous = std::get<std::string>(v->v);
  return Status::ok();
}

}  // namespace

Result<EngineSetup> engine_setup_from_options(const di_options* options) {
  DI_RETURN_IF_ERROR(check_scope(options, "engine", "di_engine_create"));
  EngineSetup s;
  s.model.device = "auto";
  if (const Value* v = find(options, "async_scheduling")) DI_RETURN_IF_ERROR(bool_field(*v, "async_scheduling", &s.config.async_scheduling));
  if (const Value* v = find(options, "block_size")) DI_RETURN_IF_ERROR(int32_field(*v, "block_size", &s.config.block_size));
  if (const Value* v = find(options, "constraint_max_compile_work")) {
    const int64_t w = as_i64(*v);
    if (w < 0) return Status::invalid_argument("constraint_max_compile_work: expected >= 0 (0 = unlimited), got " + std::to_string(w));
    s.grammar_limits.max_compile_work = static_cast<uint64_t>(w);
  }
  if (const Value* v = find(options, "deterministic")) DI_RETURN_IF_ERROR(bool_field(*v, "deterministic", &s.config.deterministic));
  if (const Value* v = find(options, "enable_prefix_caching"))
    DI_RETURN_IF_ERROR(bool_field(*v, "enable_prefix_caching", &s.config.enable_prefix_caching));
  if (const Value* v = find(options, "device")) {
    const std::string d = std::get<std::string>(v->v);
    if (d != "auto" && d != "cpu" && d != "cuda")
      return Status::invalid_argument("device: expected \"auto\", \"cpu\" or \"cuda\", got \"" + d + "\"");
    s.model.device = d;  // "auto": load_model picks cuda when a GPU and the family's CUDA path exist
  }
  if (const Value* v = find(options, "gpu_memory_utilization")) {
    const double u = as_double(*v);
    if (!(u > 0 && u <= 1)) return Status::invalid_argument("gpu_memory_utilization: expected a value in (0, 1], got " + std::to_string(u));
    // Only sizes a CUDA model's cache; on the CPU kv_cache_bytes (or its default) applies.
    s.model.gpu_memory_utilization = u;
  }
  if (const Value* v = find(options, "gpu_memory_limit_bytes")) {
    const int64_t b = as_i64(*v);
    if (b < 0) return Status::invalid_argument("gpu_memory_limit_bytes: expected >= 0, got " + std::to_string(b));
    // A cap on the CUDA model's own bytes (weights, workspaces, caches); 0 leaves only the share.
    s.model.gpu_memory_limit_bytes = b;
  }
  if (const Value* v = find(options, "kv_cache_bytes")) {
    s.config.kv_cache_bytes = as_i64(*v);
    if (s.config.kv_cache_bytes <= 0) return Status::invalid_argument("kv_cache_bytes: expected > 0, got " + std::to_string(s.config.kv_cache_bytes));
  }
  if (const Value* v = find(options, "max_model_len")) {
    s.config.max_model_len = as_i64(*v);
    if (s.config.max_model_len <= 0) return Status::invalid_argument("max_model_len: expected >= 1, got " + std::to_string(s.config.max_model_len));
  }
  if (const Value* v = find(options, "max_num_batched_tokens")) s.config.max_num_batched_tokens = as_i64(*v);
  if (const Value* v = find(options, "max_num_seqs")) DI_RETURN_IF_ERROR(int32_field(*v, "max_num_seqs", &s.config.max_num_seqs));
  if (const Value* v = find(options, "num_threads")) {
    DI_RETURN_IF_ERROR(int32_field(*v, "num_threads", &s.model.num_threads));
    if (s.model.num_threads < 0) return Status::invalid_argument("num_threads: expected >= 0, got " + std::to_string(s.model.num_threads));
  }
  if (const Value* v = find(options, "num_speculative_tokens")) {
    DI_RETURN_IF_ERROR(int32_field(*v, "num_speculative_tokens", &s.config.num_speculative_tokens));
    if (s.config.num_speculative_tokens < 0)
      return Status::invalid_argument("num_speculative_tokens: expected >= 0, got " + std::to_string(s.config.num_speculative_tokens));
  }
  if (const Value* v = find(options, "speculative_variable")) {
    bool variable = true;
    DI_RETURN_IF_ERROR(bool_field(*v, "speculative_variable", &variable));
    s.config.speculative_variable = variable ? 1 : 0;
  }
  DI_RETURN_IF_ERROR(parallel_from_options(options, s.config.parallel));
  return s;
}

Result<engine::SamplingParams> sampling_from_options(const di_options* options) {
  DI_RETURN_IF_ERROR(check_scope(options, "sampling", "di_submit"));
  engine::SamplingParams p;
  for (const request::SamplingField& f : request::sampling_fields()) {
    if (const Value* v = find(options, f.name)) DI_RETURN_IF_ERROR(read_field(*v, f, p));
  }
  if (const Value* v = find(options, "logit_bias")) {
    const json& j = std::get<json>(v->v);
    if (!j.is_object()) return Status::invalid_argument("logit_bias: expected an object {\"token id\": bias}, got " + j.dump());
    for (const auto& [k, b] : j.items()) {
      size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(k, &used);
      } catch (...) {
        used = 0;
      }
      if (used != k.size() || k.empty() || id < 0 || id > std::numeric_limits<int32_t>::max())
        return Status::invalid_argument("logit_bias: key \"" + k + "\" is not a token id");
      if (!b.is_number()) return Status::invalid_argument("logit_bias[" + k + "]: expected a number, got " + b.dump());
      p.logit_bias.emplace_back(static_cast<int32_t>(id), b.get<float>());
    }
  }
  if (const Value* v = find(options, "seed")) p.seed = static_cast<uint64_t>(as_i64(*v));
  if (const Value* v = find(options, "stop")) {
    const json& j = std::get<json>(v->v);
    if (j.is_string()) {
      p.stop.push_back(j.get<std::string>());
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_string()) return Status::invalid_argument("stop[" + std::to_string(i) + "]: expected a string, got " + j[i].dump());
        p.stop.push_back(j[i].get<std::string>());
      }
    } else {
      return Status::invalid_argument("stop: expected a string or an array of strings, got " + j.dump());
    }
  }
  if (const Value* v = find(options, "stop_token_ids")) {
    const json& j = std::get<json>(v->v);
    if (!j.is_array()) return Status::invalid_argument("stop_token_ids: expected an array of token ids, got " + j.dump());
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_number_integer() || j[i].get<int64_t>() < 0 || j[i].get<int64_t>() > std::numeric_limits<int32_t>::max())
        return Status::invalid_argument("stop_token_ids[" + std::to_string(i) + "]: expected a token id, got " + j[i].dump());
      p.stop_token_ids.push_back(j[i].get<int32_t>());
    }
  }
  return p;
}

std::string sampling_options_json(const engine::SamplingParams& p) {
  const engine::SamplingParams d;
  json j = json::object();
  for (const request::SamplingField& f : request::sampling_fields()) {
    std::visit([&](auto m) {
      if (p.*m == d.*m) return;
      if constexpr (std::is_same_v<decltype(m), bool request::SamplingParams::*>) {
        j[f.name] = p.*m ? 1 : 0;  // the boolean keys take 0 / 1
      } else {
        j[f.name] = p.*m;
      }
    }, f.member);
  }
  if (!p.logit_bias.empty()) {
    json lb = json::object();
    for (const auto& [id, bias] : p.logit_bias) lb[std::to_string(id)] = bias;
    j["logit_bias"] = std::move(lb);
  }
  if (!p.stop_token_ids.empty()) j["stop_token_ids"] = p.stop_token_ids;
  if (!p.stop.empty()) j["stop"] = p.stop;
  if (p.seed) j["seed"] = static_cast<int64_t>(*p.seed);  // the key is int64; the bits round-trip
  return j.dump();
}

}  // namespace di::capi
