// Sampler: the host implementation of the draw in sampling_math.h.
#include "engine/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/keyed_rng.h"
#include "kernels/sampling_math.h"

namespace di::engine {

using kernels::draw_target;
using kernels::draw_weight;
using kernels::keyed_uniform;
using kernels::min_p_keeps;
using kernels::order_key;
using kernels::top_p_keeps;
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void apply_edits(std::vector<float>& x, const SampleSpec& spec) {
  for (const LogitEdit& e : spec.edits[static_cast<int>(LogitEditKind::kAdd)]) x[e.token] += e.value;
  for (const LogitEdit& e : spec.edits[static_cast<int>(LogitEditKind::kExclude)]) x[e.token] = kNegInf;
  for (const LogitEdit& e : spec.edits[static_cast<int>(LogitEditKind::kRepeat)])
    x[e.token] = x[e.token] > 0 ? x[e.token] / e.value : x[e.token] * e.value;
  for (const LogitEdit& e : spec.edits[static_cast<int>(LogitEditKind::kSubtract)]) x[e.token] -= e.value;
}

// The smallest key that stays after top-k and top-p (0: everything finite stays); `w` are the
// draw weights.
uint32_t truncation_key(const std::vector<float>& x, const std::vector<uint64_t>& w, const SampleSpec& spec) {
  std::vector<std::pair<uint32_t, uint64_t>> kept;  // (key, weight) of finite tokens
  kept.reserve(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] > kNegInf) kept.emplace_back(order_key(x[i]), w[i]);
  auto more_likely = [](const auto& a, const auto& b) { return a.first > b.first; };
  uint32_t low = 0;
  if (spec.top_k > 0 && static_cast<size_t>(spec.top_k) < kept.size()) {
    const auto kth = kept.begin() + (spec.top_k - 1);
    std::nth_element(kept.begin(), kth, kept.end(), more_likely);
    low = kth->first;  // ties with the k-th stay
    std::erase_if(kept, [&](const auto& kw) { return kw.first < low; });
  }
  if (spec.top_p < 1.0) {
    std::sort(kept.begin(), kept.end(), more_likely);
    uint64_t total = 0;
    for (const auto& kw : kept) total += kw.second;
    uint64_t above = 0;
    for (size_t g = 0; g < kept.size();) {  // groups of equal keys, most likely first
      if (!top_p_keeps(above, total, spec.top_p)) break;
      low = kept[g].first;
      const uint32_t key = kept[g].first;
      while (g < kept.size() && kept[g].first == key) above += kept[g++].second;
    }
  }
  return low;
}

}  // namespace

Result<SampledToken> sample_logits(std::span<const float> logits, const SampleSpec& spec, std::vector<float>& x) {
  x.assign(logits.begin(), logits.end());
  apply_edits(x, spec);
  const size_t V = x.size();
  size_t best = 0;
  for (size_t i = 0; i < V; ++i) {
    if (std::isnan(x[i])) return Status::internal("sampler: the logits contain NaN");
    if (x[i] > x[best]) best = i;  // first max: lowest id wins ties
  }
  const float max_logit = x[best];
  if (!(max_logit > kNegInf))
    return Status::internal("sampler: every token is excluded (constraint mask, min_tokens or NaN logits)");

  SampledToken out;
  out.token = static_cast<int32_t>(best);
  if (!spec.greedy()) {
    std::vector<uint64_t> w(V);
    for (size_t i = 0; i < V; ++i) w[i] = draw_weight(x[i], max_logit, spec.temperature);
    const bool truncates = spec.top_k > 0 || spec.top_p < 1.0;
    const uint32_t low = truncates ? truncation_key(x, w, spec) : 0;
    auto kept = [&](size_t i) {
      return w[i] > 0 && order_key(x[i]) >= low && (spec.min_p <= 0.0 || min_p_keeps(w[i], spec.min_p));
    };
    uint64_t total = 0;
    for (size_t i = 0; i < V; ++i)
      if (kept(i)) total += w[i];
    const uint64_t target = draw_target(keyed_uniform(spec.seed, spec.index, spec.position), total);
    uint64_t cum = 0;
    for (size_t i = 0; i < V; ++i) {
      if (!kept(i)) continue;
      cum += w[i];
      if (cum > target) {
        out.token = static_cast<int32_t>(i);
        break;
      }
    }
  }
  if (spec.logprobs) {
    double sum = 0;
    for (float v : x) sum += std::exp(static_cast<double>(v - max_logit));
    const double log_z = max_logit + std::log(sum);
    out.logprob = static_cast<float>(x[out.token] - log_z);
    const size_t k = std::min<size_t>(static_cast<size_t>(spec.top_logprobs), V);
    if (k > 0) {
      std::vector<int32_t> idx(V);
      std::iota(idx.begin(), idx.end(), 0);
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                        [&](int32_t a, int32_t b) { return x[a] != x[b] ? x[a] > x[b] : a < b; });
      for (size_t i = 0; i < k; ++i) out.top_logprobs.emplace_back(idx[i], static_cast<float>(x[idx[i]] - log_z));
    }
  }
  return out;
}

Result<SampledToken> Sampler::sample(std::span<const float> logits, const Sequence& seq, bool masked) {
  const auto V = static_cast<size_t>(vocab_size_);
  std::span<const float> row = logits.first(V);
  if (seq.constraint && !masked) {
    masked_.assign(row.begin(), row.end());
    mask_.assign((V + 31) / 32, 0);
    seq.constraint->fill_mask(mask_.data(), static_cast<int64_t>(mask_.size()));
    for (size_t t = 0; t < V; ++t)
      if (!((mask_[t >> 5] >> (t & 31)) & 1u)) masked_[t] = kNegInf;
    row = masked_;
  }
  return sample_logits(row, make_sample_spec(seq, 0, eos_token_ids_, vocab_size_), work_);
}

}  // namespace di::engine
