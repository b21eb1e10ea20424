// The option key table. Keep entries grouped by scope and sorted within a scope; the doc
// string is what `di_options_schema` and the bindings show users. The scalar sampling keys are
// request/sampling_fields.h's table, not repeated here.
#include "capi/src/option_keys.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "request/sampling_params.h"

namespace di::capi {
namespace {

using T = OptionType;

constexpr OptionKey kFixedKeys[] = {
    // engine: read by di_engine_create
    {"async_scheduling", T::kInt64, "engine", "1 (default): overlap step N's host work with step N+1's forward; 0: off"},
    {"block_size", T::kInt64, "engine", "tokens per KV block (default 16)"},
    {"constraint_max_compile_work", T::kInt64, "engine", "structured output: work budget of one grammar compile in work units (automaton edges examined; default 20000000, about 0.2-2 s; 0 = unlimited); a schema, regex or grammar over it is refused with DI_E_LIMIT"},
    {"data_parallel_size", T::kInt64, "engine", "data-parallel ranks: processes that each run their own batches and vote on prefill steps (default 1); world size = tensor_parallel_size x expert_parallel_size x data_parallel_size, one process per GPU; above 1 process: DI_E_UNSUPPORTED until the NCCL paths are built"},
    {"deterministic", T::kInt64, "engine", "1: outputs do not depend on batch composition"},
    {"device", T::kString, "engine", "\"auto\" (default), \"cpu\" or \"cuda\""},
    {"dp_vote", T::kString, "engine", "data-parallel prefill vote: \"all\" (default: prefill when every rank wants to, a waiting rank deferred at most 8 steps) or \"any\" (when one rank wants to); the others join with decode or empty steps"},
    {"enable_prefix_caching", T::kInt64, "engine", "1 (default): reuse KV blocks of equal prompt prefixes"},
    {"eplb", T::kInt64, "engine", "1: expert-parallel load balancing, replicas of hot experts re-placed from router statistics (needs expert_parallel_size > 1; default 0)"},
    {"eplb_num_redundant_experts", T::kInt64, "engine", "EPLB: extra expert slots in all, for replicas (default 0; experts + these must split evenly over the expert-parallel ranks)"},
    {"eplb_rebalance_interval", T::kInt64, "engine", "EPLB: steps between re-plans (default 1000); a new placement is swapped in between steps"},
    {"expert_parallel_size", T::kInt64, "engine", "expert-parallel ranks the routed experts are spread over (default 1; must divide n_routed_experts)"},
    {"gpu_memory_limit_bytes", T::kInt64, "engine", "CUDA: most device bytes the model (weights, workspaces, KV cache) may take (default 0: only gpu_memory_utilization); weights that do not fit fail the load with DI_E_OOM naming the bytes needed, the bytes free and the GPUs it needs"},
    {"gpu_memory_utilization", T::kDouble, "engine", "fraction of GPU memory the engine may use (default 0.9)"},
    {"kv_cache_bytes", T::kInt64, "engine", "KV cache budget in bytes (overrides gpu_memory_utilization)"},
    {"max_model_len", T::kInt64, "engine", "longest prompt + output in tokens (default: the model's)"},
    {"max_num_batched_tokens", T::kInt64, "engine", "token budget of one engine step (default 2048)"},
    {"max_num_seqs", T::kInt64, "engine", "most sequences in one engine step (default 64, at most 65536)"},
    {"nccl_rendezvous", T::kString, "engine", "where the ranks exchange the NCCL id: \"file:PATH\" (a shared file) or \"HOST:PORT\" (a TCP store on rank 0); default MASTER_ADDR:MASTER_PORT"},
    {"num_speculative_tokens", T::kInt64, "engine", "speculative decoding with the model's MTP layers: the largest draft one step verifies (0 = off; unset: DEEPINFER_USE_NEXTN_DECODE, or 5 when DEEPINFER_ENABLE_MTP_VARLEN=1, else off); a model without MTP layers fails with DI_E_UNSUPPORTED; the CPU backend and DeepSeek-V4 on CUDA"},
    {"num_threads", T::kInt64, "engine", "CPU threads for the CPU backend (default: all cores)"},
    {"parallel_local_rank", T::kInt64, "engine", "this process's GPU on its node (default LOCAL_RANK, else parallel_rank)"},
    {"parallel_rank", T::kInt64, "engine", "this process's rank in the layout (default: RANK as torchrun sets it)"},
    {"parallel_world_size", T::kInt64, "engine", "processes in the layout (default: WORLD_SIZE, else the sizes' product)"},
    {"speculative_variable", T::kInt64, "engine", "1 (default; DEEPINFER_ENABLE_MTP_VARLEN when unset): each step verifies as many draft tokens as their confidence and the measured step costs make worth it; 0: always num_speculative_tokens; deterministic mode uses 0"},
    {"tensor_parallel_size", T::kInt64, "engine", "GPUs each attention and dense layer is split over (default 1; must divide the attention heads, kv heads and dense widths)"},

    // recipe: read by di_recipe_create
    {"recipe_clamp_max_tokens", T::kInt64, "recipe", "1: lower max_tokens to what fits the context instead of rejecting (default 0)"},
    {"recipe_context_length", T::kInt64, "recipe", "prompt + output token budget (default 1048576)"},
    {"recipe_default_thinking", T::kInt64, "recipe", "thinking mode when a request does not say (default 1)"},
    {"recipe_encoding", T::kString, "recipe", "prompt format: \"dsv4\", \"dsv41\", \"dsv32\" or \"chat_template\" (the model directory's own Jinja template); unset: the model's template unless config.json names a DeepSeek family, else \"dsv4\""},
    {"recipe_ignore_server_tools", T::kInt64, "recipe", "1: drop Anthropic server tools (web_search) instead of rejecting (default 0)"},
    {"recipe_image_allow_destinations", T::kJson, "recipe", "vision: addresses image fetches may reach although internal, e.g. [\"10.1.2.0/24\", \"127.0.0.1:8080\"]"},
    {"recipe_image_allow_remote", T::kInt64, "recipe", "vision: 1 (default) fetch http(s) image URLs; 0 refuse them (data URLs and base64 only)"},
    {"recipe_image_connect_timeout_ms", T::kInt64, "recipe", "vision: connect timeout of one image fetch (default 5000)"},
    {"recipe_image_deny_destinations", T::kJson, "recipe", "vision: addresses image fetches must never reach, e.g. [\"203.0.113.0/24\"]"},
    {"recipe_image_max_bytes", T::kInt64, "recipe", "vision: largest encoded image in bytes (default 33554432)"},
    {"recipe_image_max_concurrent_fetches", T::kInt64, "recipe", "vision: image fetches of one request running at once (default 8)"},
    {"recipe_image_max_images", T::kInt64, "recipe", "vision: most images in one request (default 600)"},
    {"recipe_image_max_total_bytes", T::kInt64, "recipe", "vision: most encoded image bytes in one request (default 67108864)"},
    {"recipe_image_policy", T::kString, "recipe", "\"unsupported\" (default: the model sees [Unsupported Image]), \"reject\" or \"vision\" (V4.1)"},
    {"recipe_image_timeout_ms", T::kInt64, "recipe", "vision: whole-fetch timeout of one image, redirects included (default 30000)"},
    {"recipe_model", T::kString, "recipe", "the served model name (default: the model directory's folder name, as serve names it; \"deepseek-v4\" without a tokenizer path)"},
    {"recipe_model_aliases", T::kJson, "recipe", "request model names served: {\"alias\": \"model\"} or [\"alias\", ...]"},

    // sampling: read by di_submit (the scalar fields come from request/sampling_fields.h)
    {"constraint_ebnf", T::kString, "sampling", "the output must match this EBNF grammar (GBNF/Lark-like, start rule `root`); needs tokenizer.json"},
    {"constraint_json_object", T::kInt64, "sampling", "1: the output must be one JSON object; needs tokenizer.json"},
    {"constraint_json_schema", T::kJson, "sampling", "the output must be JSON valid against this JSON Schema (draft 2020-12 subset); needs tokenizer.json"},
    {"constraint_json_whitespace", T::kString, "sampling", "whitespace between JSON tokens: \"flexible\" (default, short runs) or \"compact\" (none)"},
    {"constraint_regex", T::kString, "sampling", "the whole output must match this regex (ECMAScript subset); needs tokenizer.json"},
    {"logit_bias", T::kJson, "sampling", "object {\"token id\": bias in [-100, 100]}"},
    {"seed", T::kInt64, "sampling", "RNG seed; the stream is keyed by (seed, request, position)"},
    {"stop", T::kJson, "sampling", "array of stop strings (removed from the output)"},
    {"stop_token_ids", T::kJson, "sampling", "array of token ids that end generation"},
};

// The fixed keys and the scalar sampling fields' keys, the sampling scope kept sorted (it is the
// last group, so the groups stay in order).
const std::vector<OptionKey>& keys() {
  static const std::vector<OptionKey> all = [] {
    std::vector<OptionKey> v(std::begin(kFixedKeys), std::end(kFixedKeys));
    for (const request::SamplingField& f : request::sampling_fields())
      v.push_back({f.name, f.is_double() ? T::kDouble : T::kInt64, "sampling", f.doc});
    const auto first = std::find_if(v.begin(), v.end(),
                                    [](const OptionKey& k) { return k.scope == "sampling"; });
    std::sort(first, v.end(), [](const OptionKey& a, const OptionKey& b) { return a.key < b.key; });
    return v;
  }();
  return all;
}

}  // namespace

const OptionKey* find_option_key(std::string_view key) {
  for (const OptionKey& k : keys()) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

std::string_view option_type_name(OptionType type) {
  switch (type) {
    case OptionType::kInt64: return "int64";
    case OptionType::kDouble: return "double";
    case OptionType::kString: return "string";
    case OptionType::kJson: return "json";
  }
  return "unknown";
}

const char* option_schema_json() {
  static const std::string schema = [] {
    nlohmann::json a = nlohmann::json::array();
    for (const OptionKey& k : keys()) {
      a.push_back({{"key", k.key}, {"type", option_type_name(k.type)}, {"scope", k.scope},
                   {"doc", k.doc}});
    }
    return a.dump();
  }();
  return schema.c_str();
}

}  // namespace di::capi
