// EngineSession: engine creation through the C ABI, tokenizer loading, request running, and the
// CLI flags that map onto option keys.
#include "tools/cli/engine_session.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "recipe/tokenizer/tokenizer.h"
#include "tools/cli/tiny_model.h"
#include "tools/cli/token_ids_arg.h"

namespace di::cli {
namespace {

struct ErrorGuard {
  di_error* err = nullptr;
  ~ErrorGuard() { di_error_destroy(err); }
  Status status(di_status code) const {
    return Status(static_cast<StatusCode>(code), err ? di_error_message(err) : di_status_name(code));
  }
};

Result<di_options*> make_options(const nlohmann::json& j) {
  di_options* o = nullptr;
  ErrorGuard g;
  di_status st = di_options_create(&o, &g.err);
  if (st != DI_OK) return g.status(st);
  const std::string text = j.dump();
  st = di_options_update_json(o, text.data(), text.size(), &g.err);
  if (st != DI_OK) {
    di_options_destroy(o);
    return g.status(st);
  }
  return o;
}

}  // namespace

const char* finish_name(int32_t reason) {
  switch (reason) {
    case DI_FINISH_STOP: return "stop";
    case DI_FINISH_LENGTH: return "length";
    case DI_FINISH_STOP_SEQUENCE: return "stop_sequence";
    case DI_FINISH_CANCELLED: return "cancelled";
    case DI_FINISH_ERROR: return "error";
    default: return "none";
  }
}

Result<std::unique_ptr<EngineSession>> EngineSession::open(const std::string& model_dir,
                                                           const nlohmann::json& engine_options) {
  DI_RETURN_IF_ERROR(check_default_model(model_dir));
  auto s = std::unique_ptr<EngineSession>(new EngineSession());
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(model_dir) / "tokenizer.json", ec)) {
    auto tok = recipe::Tokenizer::load(model_dir);
    if (!tok.is_ok()) return Status(tok.status()).with_context("tokenizer.json");
    s->tokenizer_ = std::move(tok).value();
  }
  DI_ASSIGN_OR_RETURN(di_options* o, make_options(engine_options));
  ErrorGuard g;
  const di_status st = di_engine_create(model_dir.data(), model_dir.size(), o, &s->engine_, &g.err);
  di_options_destroy(o);
  if (st != DI_OK) return g.status(st);
  return s;
}

EngineSession::~EngineSession() { di_engine_destroy(engine_); }

Result<std::vector<int32_t>> EngineSession::encode_text(const std::string& text) const {
  if (!tokenizer_) return Status::invalid_argument("--prompt: the model has no tokenizer.json; use --prompt-ids");
  recipe::EncodeOptions eo;
  eo.add_special_tokens = true;
  return tokenizer_->encode(text, eo);
}

Result<std::vector<int32_t>> EngineSession::encode_segments(
    const std::vector<std::pair<std::string, bool>>& segments) const {
  if (!tokenizer_) return Status::invalid_argument("model: has no tokenizer.json");
  std::vector<recipe::Segment> segs;
  for (const auto& [text, special] : segments) segs.push_back({text, special});
  DI_ASSIGN_OR_RETURN(recipe::SegmentedIds ids, tokenizer_->encode_segments(segs));
  return std::move(ids.ids);
}

std::optional<std::string> EngineSession::token_bytes(int32_t id) const {
  if (!tokenizer_) return std::nullopt;
  auto b = tokenizer_->token_bytes(id);
  if (!b.is_ok()) return std::nullopt;
  return std::move(b).value();
}

int32_t EngineSession::token_id(std::string_view token) const {
  return tokenizer_ ? tokenizer_->token_to_id(token).value_or(-1) : -1;
}

int32_t EngineSession::eos_id() const { return tokenizer_ ? tokenizer_->eos_id().value_or(-1) : -1; }

Result<di_request*> EngineSession::submit(const std::vector<int32_t>& ids, const nlohmann::json& sampling) {
  DI_ASSIGN_OR_RETURN(di_options* o, make_options(sampling));
  di_request* r = nullptr;
  ErrorGuard g;
  const di_status st = di_submit(engine_, ids.data(), ids.size(), o, nullptr, nullptr, &r, &g.err);
  di_options_destroy(o);
  if (st != DI_OK) return g.status(st);
  return r;
}

Result<RequestResult> EngineSession::collect(di_request* request, int n,
                                             const ChunkFn& on_chunk,
                                             const volatile std::sig_atomic_t* interrupted) {
  RequestResult out;
  out.choices.resize(static_cast<size_t>(n));
  bool cancelled = false;
  for (;;) {
    di_chunk c;
    c.struct_size = sizeof c;
    ErrorGuard g;
    if (interrupted && *interrupted && !cancelled) {
      di_cancel(request, nullptr);  // the rest comes as the completions' "cancelled" chunks
      cancelled = true;
    }
    // With an interrupt flag, wait in slices so that a set flag is seen within one.
    const di_status st = di_poll_chunk(request, interrupted ? 100 : -1, &c, &g.err);
    if (st == DI_TIMEOUT) continue;
    if (st == DI_END_OF_STREAM) break;
    if (st != DI_OK) return g.status(st);
    CompletionResult& r = out.choices.at(c.index);
    r.ids.insert(r.ids.end(), c.token_ids, c.token_ids + c.num_tokens);
    r.text.append(c.text, c.text_len);
    if (c.logprobs) r.logprobs.insert(r.logprobs.end(), c.logprobs, c.logprobs + c.num_tokens);
    if (on_chunk) on_chunk(c);
    if (c.finish_reason != DI_FINISH_NONE) {
      r.finish_reason = finish_name(c.finish_reason);
      r.error.assign(c.error_message, c.error_message_len);
    }
    out.prompt_tokens = c.prompt_tokens;
    out.cached_prompt_tokens = c.cached_prompt_tokens;
  }
  return out;
}

Result<RequestResult> EngineSession::run(const std::vector<int32_t>& ids, const nlohmann::json& sampling,
                                         const ChunkFn& on_chunk,
                                         const volatile std::sig_atomic_t* interrupted) {
  DI_ASSIGN_OR_RETURN(di_request* r, submit(ids, sampling));
  const int n = sampling.contains("n") ? sampling["n"].get<int>() : 1;
  auto res = collect(r, n, on_chunk, interrupted);
  di_request_destroy(r);
  return res;
}

const char* const kCommonFlagsHelp =
    "  sampling: --max-tokens N --temperature T (0: greedy) --top-p P\n"
    "            --top-k K --min-p P --seed S --n N --min-tokens N --repetition-penalty R\n"
    "            --presence-penalty P --frequency-penalty F --stop STR (repeatable)\n"
    "            --stop-token-ids 1,2 --ignore-eos --logprobs --top-logprobs N\n"
    "  engine:   --threads N --max-model-len N --max-num-seqs N --max-num-batched-tokens N\n"
    "            --kv-cache-bytes N --block-size N --deterministic --no-prefix-caching\n"
    "            --constraint-max-compile-work N (structured-output compile budget; 0 = none)\n"
      "            --speculative-tokens N (MTP speculative decoding, drafts of up to N tokens;\n"
      "            0 = off) --speculative-fixed (always verify N; default: variable length)\n"
    "            --device cpu|cuda|auto (default auto: cuda when a GPU and a CUDA path exist)\n"
    "            --gpu-memory-utilization F (fraction of GPU memory, default 0.9)\n"
    "  parallel: --tensor-parallel-size N --expert-parallel-size N --data-parallel-size N\n"
    "            (one process per GPU, rank from torchrun's RANK / WORLD_SIZE or --parallel-rank N\n"
    "            --parallel-world-size N; meeting at --nccl-rendezvous file:PATH|HOST:PORT, default\n"
    "            MASTER_ADDR:MASTER_PORT) --dp-vote all|any --eplb --eplb-rebalance-interval N\n"
    "            --eplb-redundant-experts N; above one process: not built yet (refused)\n"
    "  logging:  --log-level error|warn|info|debug (standard error; default info: the load phases)\n";

bool parse_common_switch(const std::string& flag, nlohmann::json& sampling, nlohmann::json& engine_opts) {
  if (flag == "--ignore-eos") sampling["ignore_eos"] = 1;
  else if (flag == "--logprobs") sampling["logprobs"] = 1;
  else if (flag == "--deterministic") engine_opts["deterministic"] = 1;
  else if (flag == "--no-prefix-caching") engine_opts["enable_prefix_caching"] = 0;
  else if (flag == "--speculative-fixed") engine_opts["speculative_variable"] = 0;
  else if (flag == "--eplb") engine_opts["eplb"] = 1;
  else return false;
  return true;
}

int read_command_args(int argc, char** argv, const CommandArgs& args, nlohmann::json& sampling,
                      nlohmann::json& engine_opts) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      args.usage();
      return 0;
    }
    if (args.on_switch && args.on_switch(a)) continue;
    if (parse_common_switch(a, sampling, engine_opts)) continue;
    if (i + 1 >= argc) {
      std::fprintf(stderr, "deepinfer %s: %s needs a value\n", args.command, a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    bool consumed = false;
    std::string error;
    if (!parse_common_flag(a, v, sampling, engine_opts, &consumed, &error)) {
      std::fprintf(stderr, "deepinfer %s: %s\n", args.command, error.c_str());
      return 2;
    }
    if (consumed || args.on_value(a, v)) continue;
    std::fprintf(stderr, "deepinfer %s: unknown option '%s'\n", args.command, a.c_str());
    return 2;
  }
  return -1;
}

namespace {

struct FlagMap {
  std::string flag;
  std::string key;
  bool is_double;
  bool engine;
};

// The engine keys the CLI takes as value flags. Each is --key-with-dashes, but for the three
// whose CLI names are shorter than their keys (kShortEngineFlags).
constexpr std::string_view kEngineValueKeys[] = {
    "num_threads", "max_model_len", "max_num_seqs", "max_num_batched_tokens", "kv_cache_bytes",
    "block_size", "constraint_max_compile_work", "gpu_memory_utilization", "gpu_memory_limit_bytes",
    "num_speculative_tokens", "tensor_parallel_size", "expert_parallel_size", "data_parallel_size",
    "parallel_rank", "parallel_world_size", "parallel_local_rank", "eplb_rebalance_interval",
    "eplb_num_redundant_experts"};
constexpr std::pair<std::string_view, std::string_view> kShortEngineFlags[] = {
    {"num_threads", "--threads"},
    {"num_speculative_tokens", "--speculative-tokens"},
    {"eplb_num_redundant_experts", "--eplb-redundant-experts"}};

std::string flag_of(const std::string& key) {
  for (const auto& [k, flag] : kShortEngineFlags)
    if (key == k) return std::string(flag);
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The value flags: the engine keys above and a --key-with-dashes for every numeric sampling key
// of di_options_schema (the scalar sampling fields, seed), so that a new sampling field needs no
// change here. Whether a flag takes a number or an integer is the schema's type. The boolean
// sampling keys are also switches (parse_common_switch).
const std::vector<FlagMap>& value_flags() {
  static const std::vector<FlagMap> maps = [] {
    std::vector<FlagMap> v;
    size_t engine_flags = 0;
    for (const nlohmann::json& k : nlohmann::json::parse(di_options_schema())) {
      const std::string type = k.at("type"), scope = k.at("scope"), key = k.at("key");
      if (type != "int64" && type != "double") continue;
      const bool engine = scope == "engine" && std::find(std::begin(kEngineValueKeys),
                                                         std::end(kEngineValueKeys),
                                                         key) != std::end(kEngineValueKeys);
      if (!engine && scope != "sampling") continue;
      engine_flags += engine;
      v.push_back({flag_of(key), key, type == "double", engine});
    }
    // A key renamed or retyped in the schema would silently lose its flag.
    if (engine_flags != std::size(kEngineValueKeys))
      throw std::logic_error("value_flags: an engine key of the CLI is not a numeric schema key");
    return v;
  }();
  return maps;
}

}  // namespace

bool parse_common_flag(const std::string& flag, const std::string& value, nlohmann::json& sampling,
                       nlohmann::json& engine_opts, bool* consumed, std::string* error) {
  if (flag == "--log-level") {
    const int32_t level = value == "error" ? DI_LOG_ERROR : value == "warn" ? DI_LOG_WARN
                          : value == "info" ? DI_LOG_INFO : value == "debug" ? DI_LOG_DEBUG : -1;
    if (level < 0) return *error = "--log-level: expected error, warn, info or debug, got '" + value + "'", false;
    di_log_set(nullptr, nullptr, level, nullptr);
    *consumed = true;
    return true;
  }
  if (flag == "--dp-vote") {
    if (value != "all" && value != "any") return *error = "--dp-vote: expected all or any, got '" + value + "'", false;
    engine_opts["dp_vote"] = value;
    *consumed = true;
    return true;
  }
  if (flag == "--nccl-rendezvous") {
    engine_opts["nccl_rendezvous"] = value;
    *consumed = true;
    return true;
  }
  if (flag == "--device") {
    if (value != "cpu" && value != "cuda" && value != "auto")
      return *error = "--device: expected cpu, cuda or auto, got '" + value + "'", false;
    engine_opts["device"] = value;
    *consumed = true;
    return true;
  }
  *consumed = true;
  for (const FlagMap& m : value_flags()) {
    if (flag != m.flag) continue;
    char* end = nullptr;
    nlohmann::json& dst = m.engine ? engine_opts : sampling;
    if (m.is_double) {
      const double d = std::strtod(value.c_str(), &end);
      if (value.empty() || *end) return *error = m.flag + ": expected a number, got '" + value + "'", false;
      dst[m.key] = d;
    } else {
      const long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end) return *error = m.flag + ": expected an integer, got '" + value + "'", false;
      dst[m.key] = v;
    }
    return true;
  }
  if (flag == "--stop") {
    sampling["stop"].push_back(value);
    return true;
  }
  if (flag == "--stop-token-ids") {
    std::vector<int32_t> ids;
    std::string e;
    if (!parse_token_ids(value, ids, e)) return *error = "--stop-token-ids: " + e, false;
    sampling["stop_token_ids"] = ids;
    return true;
  }
  *consumed = false;
  return true;
}

}  // namespace di::cli
