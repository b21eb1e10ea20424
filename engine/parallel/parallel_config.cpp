// ParallelConfig: reading torchrun's environment, parsing the rendezvous and the layout checks.
#include "engine/parallel/parallel_config.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

namespace di::engine {
namespace {

std::string str(int64_t x) { return std::to_string(x); }

// A size field: 1..1024 (beyond that nothing has that many GPUs and products could overflow).
Status check_size(const char* name, int32_t v) {
  if (v < 1 || v > 1024) return Status::invalid_argument(std::string(name) + ": expected 1..1024, got " + str(v));
  return Status::ok();
}

// An integer environment variable in [lo, hi]; *out stays unchanged when unset.
Status env_int(const EnvLookup& env, const char* name, int32_t lo, int32_t hi, int32_t* out, bool* present) {
  *present = false;
  const char* v = env(name);
  if (!v || !*v) return Status::ok();
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi)
    return Status::invalid_argument(std::string(name) + ": expected an integer in " + str(lo) + ".." + str(hi) +
                                    ", got \"" + v + "\"");
  *out = static_cast<int32_t>(x);
  *present = true;
  return Status::ok();
}

Result<int32_t> parse_port(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  const long long p = text.empty() ? -1 : std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || p < 1 || p > 65535)
    return Status::invalid_argument("rendezvous: expected a port in 1..65535 in \"" + whole + "\"");
  return static_cast<int32_t>(p);
}

}  // namespace

bool ParallelConfig::is_default() const {
  return tensor_parallel_size == 1 && expert_parallel_size == 1 && data_parallel_size == 1 && !enable_eplb;
}

std::string Rendezvous::to_string() const {
  switch (kind) {
    case Kind::kNone: return "";
    case Kind::kFile: return "file:" + path;
    case Kind::kTcp: return "tcp://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + str(port);
  }
  return "";
}

EnvLookup process_env() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

Result<Rendezvous> parse_rendezvous(const std::string& text) {
  Rendezvous r;
  if (text.empty()) return r;
  if (text.rfind("file:", 0) == 0 || text[0] == '/') {
    r.kind = Rendezvous::Kind::kFile;
    r.path = text[0] == '/' ? text : text.substr(5);
    if (r.path.empty() || r.path[0] != '/')
      return Status::invalid_argument("rendezvous: a file rendezvous needs an absolute path, got \"" + text + "\"");
    return r;
  }
  std::string rest = text.rfind("tcp://", 0) == 0 ? text.substr(6) : text;
  std::string host, port;
  if (!rest.empty() && rest[0] == '[') {  // [IPv6]:PORT
    const size_t close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      return Status::invalid_argument("rendezvous: expected [ADDRESS]:PORT, got \"" + text + "\"");
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || rest.find(':') != colon)
      return Status::invalid_argument("rendezvous: expected \"file:PATH\" or \"HOST:PORT\", got \"" + text + "\"");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return Status::invalid_argument("rendezvous: no host in \"" + text + "\"");
  DI_ASSIGN_OR_RETURN(r.port, parse_port(port, text));
  r.kind = Rendezvous::Kind::kTcp;
  r.host = host;
  return r;
}

Result<ParallelLayout> resolve_parallel_layout(const ParallelConfig& c, const EnvLookup& env) {
  DI_RETURN_IF_ERROR(check_size("tensor_parallel_size", c.tensor_parallel_size));
  DI_RETURN_IF_ERROR(check_size("expert_parallel_size", c.expert_parallel_size));
  DI_RETURN_IF_ERROR(check_size("data_parallel_size", c.data_parallel_size));
  if (c.eplb_rebalance_interval < 1)
    return Status::invalid_argument("eplb_rebalance_interval: expected >= 1 steps, got " + str(c.eplb_rebalance_interval));
  if (c.eplb_num_redundant_experts < 0)
    return Status::invalid_argument("eplb_num_redundant_experts: expected >= 0, got " + str(c.eplb_num_redundant_experts));
  if (c.enable_eplb && c.expert_parallel_size == 1)
    return Status::invalid_argument("eplb: balances experts across expert-parallel ranks; expert_parallel_size is 1");
  const int64_t want = int64_t{c.tensor_parallel_size} * c.expert_parallel_size * c.data_parallel_size;
  if (want > 65536)
    return Status::invalid_argument("parallel layout: tensor_parallel_size " + str(c.tensor_parallel_size) +
                                    " × expert_parallel_size " + str(c.expert_parallel_size) + " × data_parallel_size " +
                                    str(c.data_parallel_size) + " = " + str(want) + " processes, more than 65536");
  ParallelLayout l;
  l.config = c;
  constexpr int32_t kMax = 65536;
  bool have_rank = false, have_world = false, have_local = false, have_local_world = false;
  int32_t rank = 0, world = 1, local = 0, local_world = 1;
  DI_RETURN_IF_ERROR(env_int(env, "RANK", 0, kMax - 1, &rank, &have_rank));
  DI_RETURN_IF_ERROR(env_int(env, "WORLD_SIZE", 1, kMax, &world, &have_world));
  DI_RETURN_IF_ERROR(env_int(env, "LOCAL_RANK", 0, kMax - 1, &local, &have_local));
  DI_RETURN_IF_ERROR(env_int(env, "LOCAL_WORLD_SIZE", 1, kMax, &local_world, &have_local_world));
  // Explicit fields win over the environment, field by field.
  l.world_size = c.world_size >= 0 ? c.world_size : have_world ? world : static_cast<int32_t>(want);
  l.rank = c.rank >= 0 ? c.rank : have_rank ? rank : 0;
  if (l.world_size < 1) return Status::invalid_argument("world_size: expected >= 1, got " + str(l.world_size));
  if (l.world_size != want)
    return Status::invalid_argument("parallel layout: tensor_parallel_size " + str(c.tensor_parallel_size) +
                                    " × expert_parallel_size " + str(c.expert_parallel_size) + " × data_parallel_size " +
                                    str(c.data_parallel_size) + " = " + str(want) + ", but the world size is " +
                                    str(l.world_size) + (c.world_size >= 0 ? " (world_size)" : " (WORLD_SIZE)"));
  if (want > 1 && c.rank < 0 && !have_rank)
    return Status::invalid_argument("parallel layout: " + str(want) + " processes, one per GPU, but this process has no "
                                    "rank: start it with torchrun (RANK, WORLD_SIZE) or set rank and world_size");
  if (l.rank < 0 || l.rank >= l.world_size)
    return Status::invalid_argument("rank: expected 0.." + str(l.world_size - 1) + ", got " + str(l.rank));
  // One node unless told otherwise: every process local.
  l.local_world_size = c.local_world_size >= 0 ? c.local_world_size : have_local_world ? local_world : l.world_size;
  l.local_rank = c.local_rank >= 0 ? c.local_rank : have_local ? local : l.rank % l.local_world_size;
  if (l.local_world_size < 1 || l.local_world_size > l.world_size)
    return Status::invalid_argument("local_world_size: expected 1.." + str(l.world_size) + ", got " + str(l.local_world_size));
  if (l.local_rank < 0 || l.local_rank >= l.local_world_size)
    return Status::invalid_argument("local_rank: expected 0.." + str(l.local_world_size - 1) + ", got " + str(l.local_rank));
  l.tp_rank = l.rank % c.tensor_parallel_size;
  l.ep_rank = (l.rank / c.tensor_parallel_size) % c.expert_parallel_size;
  l.dp_rank = l.rank / (c.tensor_parallel_size * c.expert_parallel_size);
  if (!c.rendezvous.empty()) {
    DI_ASSIGN_OR_RETURN(l.rendezvous, parse_rendezvous(c.rendezvous));
  } else if (l.world_size > 1) {
    const char* addr = env("MASTER_ADDR");
    const char* port = env("MASTER_PORT");
    if (!addr || !*addr || !port || !*port)
      return Status::invalid_argument("rendezvous: " + str(l.world_size) + " processes must meet to exchange the NCCL "
                                      "id; set rendezvous (\"file:PATH\" or \"HOST:PORT\") or MASTER_ADDR and MASTER_PORT");
    const std::string a(addr);
    auto r = parse_rendezvous((a.find(':') != std::string::npos ? "[" + a + "]" : a) + ":" + port);
    if (!r.is_ok()) return Status::invalid_argument("MASTER_ADDR / MASTER_PORT: " + r.status().message());
    l.rendezvous = *r;
  }
  return l;
}

ParallelModelShape parallel_model_shape(const nlohmann::json& config) {
  const nlohmann::json& j = config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
  auto get = [&](const char* k) -> int64_t {
    return j.contains(k) && j[k].is_number_integer() ? j[k].get<int64_t>() : 0;
  };
  ParallelModelShape s;
  s.num_attention_heads = get("num_attention_heads");
  s.num_key_value_heads = j.contains("num_key_value_heads") ? get("num_key_value_heads") : s.num_attention_heads;
  s.intermediate_size = get("intermediate_size");
  s.moe_intermediate_size = get("moe_intermediate_size");
  s.n_routed_experts = get("n_routed_experts") ? get("n_routed_experts") : get("num_local_experts");
  s.n_shared_experts = get("n_shared_experts");
  return s;
}

Status check_layout_fits_model(const ParallelConfig& c, const ParallelModelShape& s) {
  const int64_t tp = c.tensor_parallel_size, ep = c.expert_parallel_size;
  auto divides = [&](const char* what, int64_t width, int64_t by, const char* size_name) -> Status {
    if (width > 0 && width % by != 0)
      return Status::invalid_argument(std::string(size_name) + " " + str(by) + " does not divide the model's " + what +
                                      " " + str(width));
    return Status::ok();
  };
  DI_RETURN_IF_ERROR(divides("num_attention_heads", s.num_attention_heads, tp, "tensor_parallel_size"));
  DI_RETURN_IF_ERROR(divides("num_key_value_heads", s.num_key_value_heads, tp, "tensor_parallel_size"));
  DI_RETURN_IF_ERROR(divides("intermediate_size", s.intermediate_size, tp, "tensor_parallel_size"));
  // Shared experts are dense MLPs of moe_intermediate_size each: split like the dense layers.
  // Routed experts are split by tp too when ep does not spread them whole over the ranks.
  if (s.n_shared_experts > 0 || (ep == 1 && s.n_routed_experts > 0))
    DI_RETURN_IF_ERROR(divides("moe_intermediate_size", s.moe_intermediate_size, tp, "tensor_parallel_size"));
  if (ep > 1 && s.n_routed_experts == 0)
    return Status::invalid_argument("expert_parallel_size " + str(ep) + ": the model has no routed experts");
  DI_RETURN_IF_ERROR(divides("n_routed_experts", s.n_routed_experts, ep, "expert_parallel_size"));
  return Status::ok();
}

Status check_layout_fits_devices(const ParallelLayout& l, int32_t visible_gpus) {
  if (l.local_world_size > visible_gpus)
    return Status::invalid_argument(
        "parallel layout: " + str(l.world_size) + " processes (tensor_parallel_size " + str(l.config.tensor_parallel_size) +
        " × expert_parallel_size " + str(l.config.expert_parallel_size) + " × data_parallel_size " +
        str(l.config.data_parallel_size) + "), " + str(l.local_world_size) + " on this node, one GPU each, but " +
        str(visible_gpus) + (visible_gpus == 1 ? " GPU is" : " GPUs are") + " visible");
  if (l.local_rank >= visible_gpus)
    return Status::invalid_argument("local_rank " + str(l.local_rank) + ": only " + str(visible_gpus) + " GPUs are visible");
  return Status::ok();
}

}  // namespace di::engine
