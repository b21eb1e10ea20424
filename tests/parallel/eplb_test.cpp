// EPLB: the planner's busiest-GPU load against brute force over every replica count and
// placement on small cases, its invariants and determinism, replica dispatch, the decayed
// statistics and the between-steps plan swap with its weight moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

#include "engine/parallel/eplb.h"

namespace di::engine {
namespace {

double peak(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

// The least possible busiest-GPU load: every replica count vector (each expert >= 1, all slots
// used) and every way to put the replicas into num_gpus GPUs of `slots` slots each.
double brute_force_peak(const std::vector<double>& loads, int num_gpus, int slots) {
  const int n = static_cast<int>(loads.size());
  const int total = num_gpus * slots;
  double best = 1e300;
  std::vector<int> r(n, 1);
  std::vector<double> items;
  std::vector<double> gpu(num_gpus);
  std::vector<int> used(num_gpus);
  std::function<void(size_t)> place = [&](size_t i) {
    if (i == items.size()) {
      best = std::min(best, peak(gpu));
      return;
    }
    for (int g = 0; g < num_gpus; ++g) {
      if (used[g] == slots) continue;
      gpu[g] += items[i];
      ++used[g];
      if (gpu[g] < best) place(i + 1);
      gpu[g] -= items[i];
      --used[g];
    }
  };
  std::function<void(int, int)> counts = [&](int e, int left) {
    if (e == n - 1) {
      r[e] = 1 + left;
      items.clear();
      for (int x = 0; x < n; ++x)
        for (int k = 0; k < r[x]; ++k) items.push_back(loads[x] / r[x]);
      std::fill(gpu.begin(), gpu.end(), 0.0);
      std::fill(used.begin(), used.end(), 0);
      place(0);
      return;
    }
    for (int extra = 0; extra <= left; ++extra) {
      r[e] = 1 + extra;
      counts(e + 1, left - extra);
    }
  };
  counts(0, total - n);
  return best;
}

void expect_invariants(const ExpertPlacement& p, int num_experts) {
  ASSERT_EQ(static_cast<int>(p.physical_to_logical.size()), p.num_gpus * p.slots_per_gpu);
  ASSERT_EQ(static_cast<int>(p.logical_to_physical.size()), num_experts);
  int listed = 0;
  for (int e = 0; e < num_experts; ++e) {
    EXPECT_GE(p.logical_to_physical[e].size(), 1u) << "expert " << e << " has no replica";
    EXPECT_TRUE(std::is_sorted(p.logical_to_physical[e].begin(), p.logical_to_physical[e].end()));
    for (int s : p.logical_to_physical[e]) EXPECT_EQ(p.physical_to_logical[s], e);
    listed += static_cast<int>(p.logical_to_physical[e].size());
  }
  EXPECT_EQ(listed, p.num_gpus * p.slots_per_gpu);  // every slot filled, once
}

// Small fixed-seed load vectors: skewed, flat, one hot expert, and LCG draws.
std::vector<std::vector<double>> load_cases(int n) {
  std::vector<std::vector<double>> cases;
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = n - i;
  cases.push_back(v);
  cases.push_back(std::vector<double>(n, 5.0));
  std::vector<double> hot(n, 1.0);
  hot[n / 2] = 40;
  cases.push_back(hot);
  uint64_t s = 0x9e3779b97f4a7c15ull + n;
  for (int k = 0; k < 12; ++k) {
    for (int i = 0; i < n; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      v[i] = static_cast<double>((s >> 33) % 100);
    }
    cases.push_back(v);
  }
  return cases;
}

TEST(Eplb, PlannerMatchesBruteForceWhereOptimalAndStaysWithinItsBound) {
  int optimal_cases = 0, bounded_cases = 0;
  double worst_ratio = 1;
  for (int n = 2; n <= 6; ++n) {
    for (int g = 2; g <= 3; ++g) {
      for (int slots = 1; slots <= 4; ++slots) {
        const int extra = g * slots - n;
        if (extra < 0 || extra > 2) continue;
        for (const std::vector<double>& loads : load_cases(n)) {
          auto p = plan_expert_placement(loads, g, slots);
          ASSERT_TRUE(p.is_ok()) << p.status().message();
          expect_invariants(*p, n);
          const double got = peak(gpu_loads(*p, loads));
          const double best = brute_force_peak(loads, g, slots);
          ASSERT_GE(got, best - 1e-9);
          if (slots == 1 || (extra == 0 && slots == 2)) {
            EXPECT_NEAR(got, best, 1e-9) << n << " experts, " << g << " GPUs x " << slots;
            ++optimal_cases;
          } else {
            double total = 0, share = 0;
            for (int e = 0; e < n; ++e) {
              total += loads[e];
              share = std::max(share, loads[e] / p->logical_to_physical[e].size());
            }
            EXPECT_LE(got, total / g + share + 1e-9);
            EXPECT_LE(got, 2 * best + 1e-9);
            if (best > 0) worst_ratio = std::max(worst_ratio, got / best);
            ++bounded_cases;
          }
        }
      }
    }
  }
  EXPECT_GT(optimal_cases, 50);
  EXPECT_GT(bounded_cases, 50);
  std::printf("eplb: %d cases optimal as documented, %d bounded; worst greedy / optimum %.4f\n", optimal_cases,
              bounded_cases, worst_ratio);
}

TEST(Eplb, HotExpertGetsTheReplicasAndTheyLandOnDifferentGpus) {
  const std::vector<double> loads = {100, 10, 10, 10, 10, 10};
  auto p = plan_expert_placement(loads, 2, 4);  // 2 redundant slots
  ASSERT_TRUE(p.is_ok());
  ASSERT_EQ(p->logical_to_physical[0].size(), 3u);
  std::vector<int> gpus;
  for (int s : p->logical_to_physical[0]) gpus.push_back(p->gpu_of(s));
  EXPECT_NE(std::count(gpus.begin(), gpus.end(), 0), 3);  // not all on one GPU
}

TEST(Eplb, PlansAreDeterministic) {
  for (int n = 2; n <= 6; ++n) {
    for (const auto& loads : load_cases(n)) {
      auto a = plan_expert_placement(loads, 2, (n + 3) / 2);
      auto b = plan_expert_placement(loads, 2, (n + 3) / 2);
      ASSERT_TRUE(a.is_ok() && b.is_ok());
      EXPECT_EQ(a->physical_to_logical, b->physical_to_logical);
    }
  }
}

TEST(Eplb, DispatchSpreadsTokensEvenlyOverReplicas) {
  auto p = plan_expert_placement(std::vector<double>{9, 1, 1, 1}, 2, 3);
  ASSERT_TRUE(p.is_ok());
  const auto& reps = p->logical_to_physical[0];
  ASSERT_EQ(reps.size(), 3u);
  std::vector<int> hits(p->physical_to_logical.size(), 0);
  for (int64_t t = 0; t < 300; ++t) {
    const int32_t s = p->physical_expert(0, t);
    EXPECT_EQ(p->physical_to_logical[s], 0);
    EXPECT_EQ(s, p->physical_expert(0, t));
    ++hits[s];
  }
  for (int s : reps) EXPECT_EQ(hits[s], 100);
}

TEST(Eplb, BadShapesAreErrors) {
  EXPECT_FALSE(plan_expert_placement(std::vector<double>{1, 1, 1}, 1, 2).is_ok());  // 3 into 2 slots
  EXPECT_FALSE(plan_expert_placement(std::vector<double>{}, 1, 2).is_ok());
  EXPECT_FALSE(plan_expert_placement(std::vector<double>{1, -1}, 1, 2).is_ok());
  EplbBalancer::Config c;
  c.num_layers = 2;
  c.num_experts = 8;
  c.num_gpus = 3;
  auto b = EplbBalancer::create(c);
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().message(), "eplb: 8 experts + 0 redundant do not split evenly over 3 GPUs");
}

TEST(Eplb, StatisticsDecayAndCountChosenExperts) {
  ExpertLoadStats s(2, 4, 0.5);
  const std::vector<int32_t> ids = {0, 0, 1, 3, 9, -1};
  s.record(0, ids);
  s.record(1, std::vector<int32_t>{2});
  EXPECT_EQ(s.layer_load(0)[0], 0);  // counts land at end_step
  s.end_step();
  EXPECT_EQ(std::vector<double>(s.layer_load(0).begin(), s.layer_load(0).end()), (std::vector<double>{2, 1, 0, 1}));
  s.record(0, std::vector<int32_t>{2});
  s.end_step();
  EXPECT_EQ(std::vector<double>(s.layer_load(0).begin(), s.layer_load(0).end()), (std::vector<double>{1, 0.5, 1, 0.5}));
  EXPECT_EQ(s.layer_load(1)[2], 0.5);
}

// Applying a swap's weight moves to the old slot table gives the new one, every source slot held
// the expert in the old plan, and a snapshot taken before the swap stays the old plan.
TEST(Eplb, RebalanceSwapsBetweenStepsAndMovesRebuildTheNewPlan) {
  EplbBalancer::Config c;
  c.num_layers = 2;
  c.num_experts = 6;
  c.num_gpus = 2;
  c.num_redundant_experts = 2;
  c.rebalance_interval = 3;
  c.decay = 0.9;
  auto b = EplbBalancer::create(c);
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  std::shared_ptr<const EplbPlan> before = (*b)->plan();
  EXPECT_EQ(before->version, 0);
  for (int step = 0; step < 3; ++step) {
    (*b)->record(0, std::vector<int32_t>{5, 5, 5, 5, 5, 4, 0});
    (*b)->record(1, std::vector<int32_t>{1, 1, 1, 2});
    std::vector<WeightMove> moves = (*b)->end_step();
    if (step < 2) {
      EXPECT_TRUE(moves.empty());
      EXPECT_EQ((*b)->plan(), before);
      continue;
    }
    std::shared_ptr<const EplbPlan> after = (*b)->plan();
    EXPECT_EQ(after->version, 1);
    EXPECT_EQ(before->version, 0);  // the old snapshot is untouched
    EXPECT_FALSE(moves.empty());
    std::vector<std::vector<int32_t>> table;
    for (const auto& l : before->layers) table.push_back(l.physical_to_logical);
    for (const WeightMove& m : moves) {
      EXPECT_EQ(m.gpu, after->layers[m.layer].gpu_of(m.physical));
      if (m.source_physical >= 0) {
        EXPECT_EQ(before->layers[m.layer].physical_to_logical[m.source_physical], m.logical);
      }
      table[m.layer][m.physical] = m.logical;
    }
    for (size_t l = 0; l < table.size(); ++l) {
      EXPECT_EQ(table[l], after->layers[l].physical_to_logical);
      expect_invariants(after->layers[l], 6);
    }
    EXPECT_EQ(after->layers[0].logical_to_physical[5].size(), 3u);  // the hot expert got both spares
    EXPECT_LT(peak(gpu_loads(after->layers[0], (*b)->stats().layer_load(0))),
              peak(gpu_loads(before->layers[0], (*b)->stats().layer_load(0))));
  }
  // Same statistics shape again: re-planning from equal loads moves nothing.
  EXPECT_TRUE(weight_moves(*(*b)->plan(), *(*b)->plan()).empty());
}

}  // namespace
}  // namespace di::engine
