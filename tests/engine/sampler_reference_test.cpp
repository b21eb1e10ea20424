// The sampler's candidate sets and draw frequencies against a plain double-precision reference
// written from the definitions (kernels/sampling_math.h), on fixed logits with ties, for
// every combination of temperature, top-k, top-p and min-p: each drawn token is in the reference
// set and the frequencies follow the reference's renormalised probabilities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "engine/sample/sampler.h"

namespace di::engine {
namespace {

// Ties everywhere: 60 tokens on a grid of 12 values, plus two excluded ones.
std::vector<float> fixed_logits() {
  std::mt19937 rng(3);
  std::vector<float> x(60);
  for (float& v : x) v = static_cast<float>(rng() % 12) * 0.5f - 2.f;
  x[7] = -INFINITY;
  x[31] = -INFINITY;
  return x;
}

// The reference: which tokens stay, with their renormalised probabilities.
std::vector<double> reference_probs(const std::vector<float>& x, double T, int k, double top_p, double min_p) {
  const size_t V = x.size();
  std::vector<float> finite;
  for (float v : x)
    if (v > -INFINITY) finite.push_back(v);
  std::sort(finite.rbegin(), finite.rend());
  const float kth = (k > 0 && static_cast<size_t>(k) < finite.size()) ? finite[k - 1] : -INFINITY;
  const float mx = finite.front();
  std::vector<double> q(V, 0.0);
  double z = 0;
  for (size_t i = 0; i < V; ++i)
    if (x[i] > -INFINITY && x[i] >= kth) z += q[i] = std::exp((x[i] - mx) / T);
  std::vector<double> p(V, 0.0);
  double kept = 0;
  for (size_t i = 0; i < V; ++i) {
    if (q[i] == 0) continue;
    double above = 0;  // probability of strictly more likely tokens in the top-k set
    for (size_t j = 0; j < V; ++j)
      if (q[j] > 0 && x[j] > x[i]) above += q[j] / z;
    if (top_p < 1.0 && !(above < top_p)) continue;
    if (min_p > 0 && q[i] < min_p) continue;  // q of the top token is 1
    kept += p[i] = q[i];
  }
  for (double& v : p) v /= kept;
  return p;
}

TEST(SamplerReference, SetsAndFrequenciesFollowTheDefinitions) {
  const std::vector<float> x = fixed_logits();
  std::vector<float> work;
  int combos = 0;
  for (double T : {0.5, 1.0, 1.7})
    for (int k : {0, 1, 3, 10})
      for (double top_p : {1.0, 0.8, 0.3})
        for (double min_p : {0.0, 0.2}) {
          const std::vector<double> ref = reference_probs(x, T, k, top_p, min_p);
          SampleSpec spec;
          spec.temperature = T;
          spec.top_k = k;
          spec.top_p = top_p;
          spec.min_p = min_p;
          spec.seed = 99;
          const int n = 4000;
          std::vector<int> count(x.size(), 0);
          for (int i = 0; i < n; ++i) {
            spec.position = static_cast<uint64_t>(i);
            auto r = sample_logits(x, spec, work);
            ASSERT_TRUE(r.is_ok());
            ASSERT_GT(ref[r->token], 0.0) << "token " << r->token << " is outside the reference set (T " << T
                                          << ", k " << k << ", top_p " << top_p << ", min_p " << min_p << ")";
            ++count[r->token];
          }
          for (size_t t = 0; t < x.size(); ++t) {
            const double sd = std::sqrt(ref[t] * (1 - ref[t]) / n);
            EXPECT_NEAR(count[t] / double(n), ref[t], 5 * sd + 1e-3) << "token " << t << " T " << T << " k " << k
                                                                       << " top_p " << top_p << " min_p " << min_p;
          }
          ++combos;
        }
  EXPECT_EQ(combos, 72);
}

TEST(SamplerReference, EditsApplyInOrderAndGreedyIsTheFirstMax) {
  std::vector<float> x = {1.f, 3.f, 3.f, -2.f, 0.5f};
  SampleSpec spec;
  spec.temperature = 0;
  std::vector<float> work;
  EXPECT_EQ(sample_logits(x, spec, work)->token, 1);  // tie: the lower id
  spec.edits[0] = {{3, 6.f}};                          // bias: -2 + 6 = 4
  EXPECT_EQ(sample_logits(x, spec, work)->token, 3);
  spec.edits[2] = {{3, 2.f}};                          // then repetition: 4 / 2 = 2
  EXPECT_EQ(sample_logits(x, spec, work)->token, 1);
  spec.edits[1] = {{1, 0.f}, {2, 0.f}};                // exclusions come before repetition
  EXPECT_EQ(sample_logits(x, spec, work)->token, 3);
  spec.edits[3] = {{3, 1.8f}};                         // penalty: 2 - 1.8 = 0.2 < 1 (token 0)
  EXPECT_EQ(sample_logits(x, spec, work)->token, 0);
  const std::vector<float> nan = {0.f, NAN};
  EXPECT_FALSE(sample_logits(nan, SampleSpec{}, work).is_ok());
  const std::vector<float> none = {-INFINITY, -INFINITY};
  EXPECT_FALSE(sample_logits(none, SampleSpec{}, work).is_ok());
}

}  // namespace
}  // namespace di::engine
