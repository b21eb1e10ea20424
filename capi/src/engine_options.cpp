// di_options -> EngineConfig / ModelOptions / SamplingParams.
#include "capi/src/engine_options.h"

#include <cmath>
#include <limits>
#include <string>

#include "capi/src/option_keys.h"
#include "capi/src/options.h"

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
  return s;
}

Result<engine::SamplingParams> sampling_from_options(const di_options* options) {
  DI_RETURN_IF_ERROR(check_scope(options, "sampling", "di_submit"));
  engine::SamplingParams p;
  if (const Value* v = find(options, "frequency_penalty")) p.frequency_penalty = as_double(*v);
  if (const Value* v = find(options, "ignore_eos")) DI_RETURN_IF_ERROR(bool_field(*v, "ignore_eos", &p.ignore_eos));
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
  if (const Value* v = find(options, "logprobs")) DI_RETURN_IF_ERROR(bool_field(*v, "logprobs", &p.logprobs));
  if (const Value* v = find(options, "max_tokens")) p.max_tokens = as_i64(*v);
  if (const Value* v = find(options, "min_p")) p.min_p = as_double(*v);
  if (const Value* v = find(options, "min_tokens")) DI_RETURN_IF_ERROR(int32_field(*v, "min_tokens", &p.min_tokens));
  if (const Value* v = find(options, "n")) DI_RETURN_IF_ERROR(int32_field(*v, "n", &p.n));
  if (const Value* v = find(options, "presence_penalty")) p.presence_penalty = as_double(*v);
  if (const Value* v = find(options, "repetition_penalty")) p.repetition_penalty = as_double(*v);
  if (const Value* v = find(options, "seed")) p.seed = static_cast<uint64_t>(as_i64(*v));
  if (const Value* v = find(options, "skip_special_tokens"))
    DI_RETURN_IF_ERROR(bool_field(*v, "skip_special_tokens", &p.skip_special_tokens));
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
  if (const Value* v = find(options, "temperature")) p.temperature = as_double(*v);
  if (const Value* v = find(options, "top_k")) DI_RETURN_IF_ERROR(int32_field(*v, "top_k", &p.top_k));
  if (const Value* v = find(options, "top_logprobs")) DI_RETURN_IF_ERROR(int32_field(*v, "top_logprobs", &p.top_logprobs));
  if (const Value* v = find(options, "top_p")) p.top_p = as_double(*v);
  return p;
}

std::string sampling_options_json(const engine::SamplingParams& p) {
  const engine::SamplingParams d;
  json j = json::object();
  auto put = [&](const char* key, const auto& value, const auto& fallback) {
    if (value != fallback) j[key] = value;
  };
  put("n", p.n, d.n);
  put("temperature", p.temperature, d.temperature);
  put("top_p", p.top_p, d.top_p);
  put("top_k", p.top_k, d.top_k);
  put("min_p", p.min_p, d.min_p);
  put("repetition_penalty", p.repetition_penalty, d.repetition_penalty);
  put("presence_penalty", p.presence_penalty, d.presence_penalty);
  put("frequency_penalty", p.frequency_penalty, d.frequency_penalty);
  if (!p.logit_bias.empty()) {
    json lb = json::object();
    for (const auto& [id, bias] : p.logit_bias) lb[std::to_string(id)] = bias;
    j["logit_bias"] = std::move(lb);
  }
  put("min_tokens", p.min_tokens, d.min_tokens);
  put("max_tokens", p.max_tokens, d.max_tokens);
  if (p.ignore_eos) j["ignore_eos"] = 1;  // the boolean keys take 0 / 1
  if (!p.stop_token_ids.empty()) j["stop_token_ids"] = p.stop_token_ids;
  if (!p.stop.empty()) j["stop"] = p.stop;
  if (p.seed) j["seed"] = static_cast<int64_t>(*p.seed);  // the key is int64; the bits round-trip
  if (p.logprobs) j["logprobs"] = 1;
  put("top_logprobs", p.top_logprobs, d.top_logprobs);
  if (!p.skip_special_tokens) j["skip_special_tokens"] = 0;
  return j.dump();
}

}  // namespace di::capi
