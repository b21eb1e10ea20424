// Sampler: the host implementation of the draw in sampling_math.h.
#include "engine/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

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

// x = logits with the spec's edits; the first most likely token, or the row's error.
Result<size_t> edit_logits(std::span<const float> logits, const SampleSpec& spec, std::vector<float>& x) {
  x.assign(logits.begin(), logits.end());
  apply_edits(x, spec);
  size_t best = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) return Status::internal("sampler: the logits contain NaN");
    if (x[i] > x[best]) best = i;  // first max: lowest id wins ties
  }
  if (!(x[best] > kNegInf))
    return Status::internal("sampler: every token is excluded (constraint mask, min_tokens or NaN logits)");
  return best;
}

// The draw weights of the kept candidates (0 elsewhere) of edited logits `x`.
std::vector<uint64_t> kept_weights(const std::vector<float>& x, float max_logit, const SampleSpec& spec) {
  const size_t V = x.size();
  std::vector<uint64_t> w(V);
  for (size_t i = 0; i < V; ++i) w[i] = draw_weight(x[i], max_logit, spec.temperature);
  const bool truncates = spec.top_k > 0 || spec.top_p < 1.0;
  const uint32_t low = truncates ? truncation_key(x, w, spec) : 0;
  for (size_t i = 0; i < V; ++i) {
    const bool kept = w[i] > 0 && order_key(x[i]) >= low && (spec.min_p <= 0.0 || min_p_keeps(w[i], spec.min_p));
    if (!kept) w[i] = 0;
  }
  return w;
}

void add_logprobs(const std::vector<float>& x, float max_logit, const SampleSpec& spec, SampledToken& out) {
  if (!spec.logprobs) return;
  const size_t V = x.size();
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

}  // namespace

Result<SampledToken> sample_logits(std::span<const float> logits, const SampleSpec& spec, std::vector<float>& x) {
  DI_ASSIGN_OR_RETURN(size_t best, edit_logits(logits, spec, x));
  const float max_logit = x[best];
  SampledToken out;
  out.token = static_cast<int32_t>(best);
  if (!spec.greedy()) {
    const std::vector<uint64_t> w = kept_weights(x, max_logit, spec);
    uint64_t total = 0;
    for (uint64_t wi : w) total += wi;
    const uint64_t target = draw_target(keyed_uniform(spec.seed, spec.index, spec.position), total);
    uint64_t cum = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i] == 0) continue;
      cum += w[i];
      if (cum > target) {
        out.token = static_cast<int32_t>(i);
        break;
      }
    }
  }
  add_logprobs(x, max_logit, spec, out);
  return out;
}

Status draw_distribution(std::span<const float> logits, const SampleSpec& spec, std::vector<float>& x,
                         std::vector<double>& probs) {
  DI_ASSIGN_OR_RETURN(size_t best, edit_logits(logits, spec, x));
  probs.assign(x.size(), 0.0);
  if (spec.greedy()) {
    probs[best] = 1.0;
    return Status::ok();
  }
  const std::vector<uint64_t> w = kept_weights(x, x[best], spec);
  uint64_t total = 0;
  for (uint64_t wi : w) total += wi;
  for (size_t i = 0; i < w.size(); ++i) probs[i] = static_cast<double>(w[i]) / static_cast<double>(total);
  return Status::ok();
}

Result<SampledToken> describe_token(std::span<const float> logits, const SampleSpec& spec, int32_t token,
                                    std::vector<float>& x) {
  DI_ASSIGN_OR_RETURN(size_t best, edit_logits(logits, spec, x));
  if (token < 0 || static_cast<size_t>(token) >= x.size())
    return Status::internal("sampler: token " + std::to_string(token) + " is outside the vocabulary");
  SampledToken out;
  out.token = token;
  add_logprobs(x, x[best], spec, out);
  return out;
}

std::span<const float> Sampler::masked_row(std::span<const float> logits, const Sequence& seq) {
  const auto V = static_cast<size_t>(vocab_size_);
  std::span<const float> row = logits.first(V);
  if (!seq.constraint) return row;
  masked_.assign(row.begin(), row.end());
  mask_.assign((V + 31) / 32, 0);
  seq.constraint->fill_mask(mask_.data(), static_cast<int64_t>(mask_.size()));
  for (size_t t = 0; t < V; ++t)
    if (!((mask_[t >> 5] >> (t & 31)) & 1u)) masked_[t] = kNegInf;
  return masked_;
}

Result<SampledToken> Sampler::sample(std::span<const float> logits, const Sequence& seq, bool masked) {
  const std::span<const float> row = masked ? logits.first(static_cast<size_t>(vocab_size_)) : masked_row(logits, seq);
  return sample_logits(row, make_sample_spec(seq, 0, eos_token_ids_, vocab_size_), work_);
}

Result<SampledToken> Sampler::describe(std::span<const float> logits, const Sequence& seq, int32_t token) {
  return describe_token(masked_row(logits, seq), make_sample_spec(seq, 0, eos_token_ids_, vocab_size_), token, work_);
}

Status Sampler::distribution(std::span<const float> logits, const Sequence& seq, std::vector<double>& probs) {
  return draw_distribution(masked_row(logits, seq), make_sample_spec(seq, 0, eos_token_ids_, vocab_size_), work_,
                           probs);
}

}  // namespace di::engine
