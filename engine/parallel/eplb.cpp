// EPLB: the decayed load window, the replica-count and placement heuristic, plan diffs and the
// between-steps swap.
#include "engine/parallel/eplb.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace di::engine {

ExpertLoadStats::ExpertLoadStats(int32_t num_layers, int32_t num_experts, double decay)
    : num_layers_(num_layers),
      num_experts_(num_experts),
      decay_(decay),
      load_(static_cast<size_t>(num_layers) * num_experts, 0.0),
      current_(static_cast<size_t>(num_layers) * num_experts, 0) {}

void ExpertLoadStats::record(int32_t layer, std::span<const int32_t> expert_ids) {
  if (layer < 0 || layer >= num_layers_) return;
  int64_t* row = current_.data() + static_cast<size_t>(layer) * num_experts_;
  for (int32_t e : expert_ids)
    if (e >= 0 && e < num_experts_) ++row[e];
}

void ExpertLoadStats::end_step() {
  for (size_t i = 0; i < load_.size(); ++i) {
    load_[i] = load_[i] * decay_ + static_cast<double>(current_[i]);
    current_[i] = 0;
  }
}

std::span<const double> ExpertLoadStats::layer_load(int32_t layer) const {
  return {load_.data() + static_cast<size_t>(layer) * num_experts_, static_cast<size_t>(num_experts_)};
}

int32_t ExpertPlacement::physical_expert(int32_t logical, int64_t token_index) const {
  const std::vector<int32_t>& r = logical_to_physical[logical];
  return r[static_cast<size_t>(token_index % static_cast<int64_t>(r.size()))];
}

Result<ExpertPlacement> plan_expert_placement(std::span<const double> loads, int32_t num_gpus, int32_t slots_per_gpu) {
  const auto num_experts = static_cast<int32_t>(loads.size());
  if (num_experts < 1) return Status::invalid_argument("eplb: no experts to place");
  if (num_gpus < 1 || slots_per_gpu < 1)
    return Status::invalid_argument("eplb: expected >= 1 GPU and >= 1 slot per GPU, got " + std::to_string(num_gpus) +
                                    " GPUs of " + std::to_string(slots_per_gpu) + " slots");
  const int64_t num_slots = int64_t{num_gpus} * slots_per_gpu;
  if (num_slots < num_experts)
    return Status::invalid_argument("eplb: " + std::to_string(num_experts) + " experts do not fit " +
                                    std::to_string(num_gpus) + " GPUs of " + std::to_string(slots_per_gpu) + " slots");
  for (int32_t e = 0; e < num_experts; ++e)
    if (!(loads[e] >= 0)) return Status::invalid_argument("eplb: load of expert " + std::to_string(e) + " is negative or NaN");

  // 1. Replica counts: the extra slots, one at a time, to the largest share (lowest id on ties).
  std::vector<int32_t> replicas(num_experts, 1);
  for (int64_t extra = num_slots - num_experts; extra > 0; --extra) {
    int32_t best = 0;
    for (int32_t e = 1; e < num_experts; ++e)
      if (loads[e] / replicas[e] > loads[best] / replicas[best]) best = e;
    ++replicas[best];
  }

  // 2. Placement: replicas by descending share onto the least-loaded GPU with room.
  struct Item {
    double share;
    int32_t expert;
  };
  std::vector<Item> items;
  items.reserve(num_slots);
  for (int32_t e = 0; e < num_experts; ++e)
    for (int32_t r = 0; r < replicas[e]; ++r) items.push_back({loads[e] / replicas[e], e});
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.share > b.share; });

  ExpertPlacement p;
  p.num_gpus = num_gpus;
  p.slots_per_gpu = slots_per_gpu;
  p.physical_to_logical.assign(num_slots, -1);
  p.logical_to_physical.assign(num_experts, {});
  std::vector<double> gpu_load(num_gpus, 0.0);
  std::vector<int32_t> used(num_gpus, 0);
  auto holds = [&](int32_t g, int32_t e) {
    for (int32_t s = 0; s < used[g]; ++s)
      if (p.physical_to_logical[g * slots_per_gpu + s] == e) return true;
    return false;
  };
  for (const Item& it : items) {
    int32_t best = -1;
    for (int pass = 0; pass < 2 && best < 0; ++pass) {
      for (int32_t g = 0; g < num_gpus; ++g) {
        if (used[g] == slots_per_gpu || (pass == 0 && holds(g, it.expert))) continue;
        if (best < 0 || gpu_load[g] < gpu_load[best]) best = g;
      }
    }
    const int32_t slot = best * slots_per_gpu + used[best]++;
    p.physical_to_logical[slot] = it.expert;
    gpu_load[best] += it.share;
  }
  for (int32_t s = 0; s < num_slots; ++s) p.logical_to_physical[p.physical_to_logical[s]].push_back(s);
  return p;
}

std::vector<double> gpu_loads(const ExpertPlacement& p, std::span<const double> loads) {
  std::vector<double> out(p.num_gpus, 0.0);
  for (size_t s = 0; s < p.physical_to_logical.size(); ++s) {
    const int32_t e = p.physical_to_logical[s];
    out[p.gpu_of(static_cast<int32_t>(s))] += loads[e] / static_cast<double>(p.logical_to_physical[e].size());
  }
  return out;
}

std::vector<WeightMove> weight_moves(const EplbPlan& from, const EplbPlan& to) {
  std::vector<WeightMove> moves;
  for (size_t l = 0; l < to.layers.size() && l < from.layers.size(); ++l) {
    const ExpertPlacement& a = from.layers[l];
    const ExpertPlacement& b = to.layers[l];
    for (size_t s = 0; s < b.physical_to_logical.size(); ++s) {
      const int32_t e = b.physical_to_logical[s];
      if (s < a.physical_to_logical.size() && a.physical_to_logical[s] == e) continue;
      WeightMove m;
      m.layer = static_cast<int32_t>(l);
      m.physical = static_cast<int32_t>(s);
      m.gpu = b.gpu_of(m.physical);
      m.logical = e;
      if (e < static_cast<int32_t>(a.logical_to_physical.size())) {
        for (int32_t src : a.logical_to_physical[e]) {
          if (m.source_physical < 0 || (a.gpu_of(src) == m.gpu && a.gpu_of(m.source_physical) != m.gpu))
            m.source_physical = src;
        }
      }
      moves.push_back(m);
    }
  }
  return moves;
}

Result<std::unique_ptr<EplbBalancer>> EplbBalancer::create(Config c) {
  if (c.num_layers < 1 || c.num_experts < 1)
    return Status::invalid_argument("eplb: expected >= 1 layer and >= 1 expert, got " + std::to_string(c.num_layers) +
                                    " layers of " + std::to_string(c.num_experts) + " experts");
  if (c.num_gpus < 1) return Status::invalid_argument("eplb: expected >= 1 GPU, got " + std::to_string(c.num_gpus));
  if (c.num_redundant_experts < 0)
    return Status::invalid_argument("eplb_num_redundant_experts: expected >= 0, got " + std::to_string(c.num_redundant_experts));
  if ((c.num_experts + c.num_redundant_experts) % c.num_gpus != 0)
    return Status::invalid_argument("eplb: " + std::to_string(c.num_experts) + " experts + " +
                                    std::to_string(c.num_redundant_experts) + " redundant do not split evenly over " +
                                    std::to_string(c.num_gpus) + " GPUs");
  if (c.rebalance_interval < 1)
    return Status::invalid_argument("eplb_rebalance_interval: expected >= 1 steps, got " + std::to_string(c.rebalance_interval));
  if (!(c.decay >= 0 && c.decay < 1)) return Status::invalid_argument("eplb: decay must be in [0, 1)");
  const int32_t slots = (c.num_experts + c.num_redundant_experts) / c.num_gpus;
  // Before any statistics every expert counts the same: replicas go to the lowest ids.
  auto initial = std::make_shared<EplbPlan>();
  const std::vector<double> uniform(c.num_experts, 1.0);
  DI_ASSIGN_OR_RETURN(ExpertPlacement p, plan_expert_placement(uniform, c.num_gpus, slots));
  initial->layers.assign(c.num_layers, p);
  return std::unique_ptr<EplbBalancer>(new EplbBalancer(c, std::move(initial)));
}

EplbBalancer::EplbBalancer(Config c, std::shared_ptr<const EplbPlan> initial)
    : config_(c),
      slots_per_gpu_((c.num_experts + c.num_redundant_experts) / c.num_gpus),
      stats_(c.num_layers, c.num_experts, c.decay),
      plan_(std::move(initial)) {}

std::vector<WeightMove> EplbBalancer::end_step() {
  stats_.end_step();
  if (++steps_ % config_.rebalance_interval != 0) return {};
  std::shared_ptr<const EplbPlan> old = plan();
  auto next = std::make_shared<EplbPlan>();
  next->version = old->version + 1;
  for (int32_t l = 0; l < config_.num_layers; ++l) {
    // Inputs were checked at create; a failure here is a bug.
    next->layers.push_back(plan_expert_placement(stats_.layer_load(l), config_.num_gpus, slots_per_gpu_).value());
  }
  std::vector<WeightMove> moves = weight_moves(*old, *next);
  std::lock_guard<std::mutex> lock(mu_);
  plan_ = std::move(next);
  return moves;
}

std::shared_ptr<const EplbPlan> EplbBalancer::plan() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plan_;
}

}  // namespace di::engine
