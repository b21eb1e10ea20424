// ParallelConfig: the parallel layout as plain data — how many GPUs split each layer
// (tensor_parallel_size), the MoE experts (expert_parallel_size) and the batches
// (data_parallel_size), which rank this process is (from torchrun's environment or given), where
// the ranks meet to exchange the NCCL id, and the checks a layout must pass against a model and
// the visible GPUs. Holds no communicator and starts nothing; the NCCL code reads it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "engine/sched/dp_vote.h"

namespace di::engine {

// What the user asks for. The world is tensor_parallel_size × expert_parallel_size ×
// data_parallel_size processes, one GPU each. Ranks are numbered with the tensor-parallel index
// fastest, then the expert-parallel index, then the data-parallel index, so a tensor-parallel
// group (the ranks that all-reduce every layer) sits on neighbouring GPUs of one node.
struct ParallelConfig {
  int32_t tensor_parallel_size = 1;
  int32_t expert_parallel_size = 1;
  int32_t data_parallel_size = 1;
  // This process; -1: from the environment as torchrun sets it (RANK, WORLD_SIZE, LOCAL_RANK,
  // LOCAL_WORLD_SIZE). A world of one process needs neither.
  int32_t rank = -1;
  int32_t world_size = -1;
  int32_t local_rank = -1;
  int32_t local_world_size = -1;
  // Where rank 0 publishes the NCCL unique id: "file:PATH" or an absolute path (a shared file
  // system), or "HOST:PORT" / "tcp://HOST:PORT" (a TCP store on rank 0). "": MASTER_ADDR and
  // MASTER_PORT from the environment when the world has more than one process.
  std::string rendezvous;
  // Data-parallel ranks' prefill vote (engine/sched/dp_vote.h).
  DpVoteMode dp_vote = DpVoteMode::kAll;
  // Expert-parallel load balancing (engine/parallel/eplb.h): replicas of hot experts in
  // eplb_num_redundant_experts extra slots, re-planned every eplb_rebalance_interval steps.
  bool enable_eplb = false;
  int32_t eplb_rebalance_interval = 1000;
  int32_t eplb_num_redundant_experts = 0;

  int32_t expected_world_size() const {
    return tensor_parallel_size * expert_parallel_size * data_parallel_size;
  }
  // True when every size is 1 and EPLB is off: nothing to split, the engine runs as it always has.
  bool is_default() const;
};

struct Rendezvous {
  enum class Kind { kNone, kFile, kTcp };
  Kind kind = Kind::kNone;
  std::string path;  // kFile
  std::string host;  // kTcp
  int32_t port = 0;  // kTcp
  std::string to_string() const;  // "", "file:PATH" or "tcp://HOST:PORT"
};

// A checked layout: sizes, this rank's coordinates and the rendezvous.
struct ParallelLayout {
  ParallelConfig config;  // as given, sizes checked
  int32_t rank = 0;
  int32_t world_size = 1;
  int32_t local_rank = 0;
  int32_t local_world_size = 1;
  int32_t tp_rank = 0;  // rank % tp
  int32_t ep_rank = 0;  // (rank / tp) % ep
  int32_t dp_rank = 0;  // rank / (tp * ep)
  Rendezvous rendezvous;
};

// Looks an environment variable up; nullptr when unset. Tests pass a map's lookup.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup process_env();

// Parses "file:PATH", "/abs/path", "HOST:PORT", "tcp://HOST:PORT" or "[IPV6]:PORT".
Result<Rendezvous> parse_rendezvous(const std::string& text);

// Checks the sizes, reads what is -1 from `env` and derives the coordinates. Errors name the
// field: sizes that do not multiply to WORLD_SIZE, a rank outside the world, a world of several
// processes with no rank given and no torchrun environment, a malformed variable.
Result<ParallelLayout> resolve_parallel_layout(const ParallelConfig& config, const EnvLookup& env);

// The widths a layout splits, under their config.json names (0: the model has none).
struct ParallelModelShape {
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t intermediate_size = 0;      // dense MLP
  int64_t moe_intermediate_size = 0;  // one routed expert
  int64_t n_routed_experts = 0;
  int64_t n_shared_experts = 0;
};

// Reads the shape from a model's config.json (text_config when the widths live there).
ParallelModelShape parallel_model_shape(const nlohmann::json& config);

// tp must divide the attention heads, the kv heads and the dense width (and each expert's width
// when the experts are not spread by ep); ep must divide n_routed_experts (and needs experts).
Status check_layout_fits_model(const ParallelConfig& config, const ParallelModelShape& shape);

// Each process of a node drives one GPU: the node's local_world_size processes need that many
// visible GPUs, and local_rank must name one of them.
Status check_layout_fits_devices(const ParallelLayout& layout, int32_t visible_gpus);

}  // namespace di::engine
