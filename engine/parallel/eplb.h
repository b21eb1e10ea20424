// EPLB (expert-parallel load balancing): per-layer load statistics of the logical experts the
// router picks, a planner that gives hot experts extra replicas and places every physical
// replica on an expert-parallel rank (GPU) so the busiest rank carries as little as it can, and
// the between-steps swap of one plan for the next. The router keeps naming logical experts; the
// dispatch step maps (logical expert, token) to a physical replica with the plan. Knows nothing
// of weights or communicators: weight_moves() says which slots must be reloaded from where.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "base/status.h"

namespace di::engine {

// Router choices, decayed: after each step every count is multiplied by `decay` before the next
// step's choices are added, so a load reflects roughly the last 1 / (1 - decay) steps.
class ExpertLoadStats {
 public:
  ExpertLoadStats(int32_t num_layers, int32_t num_experts, double decay);
  // Adds one step's chosen logical expert ids of `layer` (topk ids of every token, any order).
  // Ids outside [0, num_experts) are a bug of the caller and are counted nowhere.
  void record(int32_t layer, std::span<const int32_t> expert_ids);
  // Closes the step: decays the window and adds this step's counts.
  void end_step();
  std::span<const double> layer_load(int32_t layer) const;
  int32_t num_layers() const { return num_layers_; }
  int32_t num_experts() const { return num_experts_; }

 private:
  int32_t num_layers_, num_experts_;
  double decay_;
  std::vector<double> load_;     // [layer][expert], the window
  std::vector<int64_t> current_; // [layer][expert], this step so far
};

// One layer's placement. Physical slot p lives on GPU p / slots_per_gpu.
struct ExpertPlacement {
  int32_t num_gpus = 0;
  int32_t slots_per_gpu = 0;
  std::vector<int32_t> physical_to_logical;               // [num_gpus * slots_per_gpu]
  std::vector<std::vector<int32_t>> logical_to_physical;  // [expert]: its slots, ascending
  int32_t gpu_of(int32_t physical) const { return physical / slots_per_gpu; }
  // The replica of `logical` that token `token_index` goes to: the same for the same
  // (plan, expert, token) on every rank, spread evenly over the replicas.
  int32_t physical_expert(int32_t logical, int64_t token_index) const;
};

// Places `loads.size()` logical experts into num_gpus × slots_per_gpu physical slots
// (num_gpus * slots_per_gpu >= experts; the extra slots hold replicas). Heuristic, deterministic
// (ties go to the lower expert id, then the lower GPU):
//  1. replica counts: each extra slot goes to the expert with the largest load per replica —
//     this minimises the largest share any replica carries (each replica takes an equal share);
//  2. placement: replicas in descending share, each onto the least-loaded GPU with a free slot
//     that does not hold that expert yet (any GPU with a free slot when none is left).
// Optimal (equal to the brute-force minimum of the busiest GPU's load over every replica count
// and placement) when slots_per_gpu == 1 (the peak is the largest share, which step 1
// minimises) and when there are no extra slots and slots_per_gpu == 2 (step 2 pairs the largest
// with the smallest, the optimal pairing). Otherwise the busiest GPU carries at most
// total / num_gpus + the largest share — at most twice the optimum; tests check this bound on
// every small case by enumeration (measured, not proved under the slot limit; the worst case
// enumerated there is 1.37 × the optimum).
Result<ExpertPlacement> plan_expert_placement(std::span<const double> loads, int32_t num_gpus, int32_t slots_per_gpu);

// The load each GPU carries under `placement` (each replica an equal share of its expert).
std::vector<double> gpu_loads(const ExpertPlacement& placement, std::span<const double> loads);

// One physical slot whose expert changes between two plans: load `logical`'s weights into slot
// `physical` (on GPU `gpu`), copying them from `source_physical` of the old plan (a slot that
// held it, preferring one on the same GPU), or from host memory when source_physical is -1.
struct WeightMove {
  int32_t layer = 0;
  int32_t physical = 0;
  int32_t gpu = 0;
  int32_t logical = 0;
  int32_t source_physical = -1;
};

struct EplbPlan {
  int64_t version = 0;  // 0: the initial plan; +1 per swap
  std::vector<ExpertPlacement> layers;
};

// The slots that change from `from` to `to` (same shape), in layer then slot order.
std::vector<WeightMove> weight_moves(const EplbPlan& from, const EplbPlan& to);

// Keeps the live plan and re-plans from the statistics every `rebalance_interval` steps. The
// step thread calls record() during a step and end_step() between steps; a new plan replaces
// the old one in end_step only, so every expert of one step dispatches with one plan. Other
// threads may read plan() at any time: they get a snapshot that stays valid while held.
// Moving the weights: the device side applies weight_moves(old, new) into spare buffers before
// the next step and flips its slot table at the same step boundary on every rank (all ranks
// see the same router counts after the all-to-all, so they compute the same plan).
class EplbBalancer {
 public:
  struct Config {
    int32_t num_layers = 0;
    int32_t num_experts = 0;
    int32_t num_gpus = 1;
    int32_t num_redundant_experts = 0;  // extra slots in all, spread evenly over the GPUs
    int32_t rebalance_interval = 1000;  // steps
    double decay = 0.99;
  };
  static Result<std::unique_ptr<EplbBalancer>> create(Config config);

  void record(int32_t layer, std::span<const int32_t> expert_ids) { stats_.record(layer, expert_ids); }
  // Closes the step; every rebalance_interval steps computes a plan from the window and swaps it
  // in. Returns the moves the swap needs (empty when no swap happened or nothing moved).
  std::vector<WeightMove> end_step();
  std::shared_ptr<const EplbPlan> plan() const;
  const ExpertLoadStats& stats() const { return stats_; }

 private:
  EplbBalancer(Config config, std::shared_ptr<const EplbPlan> initial);
  Config config_;
  int32_t slots_per_gpu_;
  ExpertLoadStats stats_;
  int64_t steps_ = 0;
  mutable std::mutex mu_;  // guards plan_ (the pointer, not the plan: plans are immutable)
  std::shared_ptr<const EplbPlan> plan_;
};

}  // namespace di::engine
