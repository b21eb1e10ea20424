// Sampler: logits processors in vLLM's order, then the draw.
#include "engine/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "engine/sample/rng.h"

namespace di::engine {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr double kGreedyBelow = 1e-5;  // temperatures this small are greedy (avoids overflow)

}  // namespace

void Sampler::apply_processors(std::vector<float>& x, const Sequence& seq, bool masked) {
  const SamplingParams& p = *seq.params;
  if (seq.constraint && !masked) {
    mask_.assign(static_cast<size_t>((vocab_size_ + 31) / 32), 0);
    seq.constraint->fill_mask(mask_.data(), static_cast<int64_t>(mask_.size()));
    for (int64_t t = 0; t < vocab_size_; ++t)
      if (!((mask_[t >> 5] >> (t & 31)) & 1u)) x[t] = kNegInf;
  }
  for (const auto& [id, bias] : p.logit_bias) x[id] += bias;
  if (seq.num_output_tokens() < p.min_tokens) {
    if (!p.ignore_eos)
      for (int32_t e : eos_token_ids_) if (e >= 0 && e < vocab_size_) x[e] = kNegInf;
    for (int32_t s : p.stop_token_ids) x[s] = kNegInf;
  }
  if (p.repetition_penalty != 1.0) {
    const float r = static_cast<float>(p.repetition_penalty);
    std::unordered_set<int32_t> seen(seq.token_ids.begin(), seq.token_ids.end());
    for (int32_t t : seen) {
      if (t < 0 || t >= vocab_size_) continue;
      x[t] = x[t] > 0 ? x[t] / r : x[t] * r;
    }
  }
  if (p.presence_penalty != 0.0 || p.frequency_penalty != 0.0) {
    for (const auto& [t, count] : seq.output_counts) {
      if (t < 0 || t >= vocab_size_) continue;
      x[t] -= static_cast<float>(p.frequency_penalty * count + p.presence_penalty);
    }
  }
}

Result<SampledToken> Sampler::sample(std::span<const float> logits, const Sequence& seq, bool masked) {
  const SamplingParams& p = *seq.params;
  const auto V = static_cast<size_t>(vocab_size_);
  work_.assign(logits.begin(), logits.begin() + V);
  apply_processors(work_, seq, masked);

  const auto max_it = std::max_element(work_.begin(), work_.end());  // first max: lowest id wins ties
  const float max_logit = *max_it;
  if (!(max_logit > kNegInf) || std::isnan(max_logit))
    return Status::internal("sampler: every token is excluded (constraint mask, min_tokens or NaN logits)");

  // Log-softmax of the processed logits, for logprobs.
  double sum = 0;
  for (float v : work_) sum += std::exp(static_cast<double>(v - max_logit));
  const double log_z = max_logit + std::log(sum);

  SampledToken out;
  const double t = p.temperature;
  if (t < kGreedyBelow) {
    out.token = static_cast<int32_t>(max_it - work_.begin());
  } else {
    // Candidates sorted by logit, most likely first; ties broken by token id so the order (and
    // the draw) does not depend on the sort's whims.
    order_.resize(V);
    std::iota(order_.begin(), order_.end(), 0);
    auto cmp = [&](int32_t a, int32_t b) { return work_[a] != work_[b] ? work_[a] > work_[b] : a < b; };
    size_t keep = V;
    const bool truncates = (p.top_k > 0 && static_cast<size_t>(p.top_k) < V) || p.top_p < 1.0 ||
                           p.min_p > 0.0;
    if (!truncates) {
      // Nothing is cut: draw over token ids in id order, no sort needed.
    } else if (p.top_k > 0 && static_cast<size_t>(p.top_k) < V) {
      keep = static_cast<size_t>(p.top_k);
      std::partial_sort(order_.begin(), order_.begin() + keep, order_.end(), cmp);
    } else {
      std::sort(order_.begin(), order_.end(), cmp);
    }
    if (truncates) while (keep > 1 && !(work_[order_[keep - 1]] > kNegInf)) --keep;
    std::vector<double> probs(keep);
    double z = 0;
    for (size_t i = 0; i < keep; ++i) z += probs[i] = std::exp((work_[order_[i]] - max_logit) / t);
    for (double& q : probs) q /= z;
    if (p.top_p < 1.0) {
      double cum = 0;
      size_t k = 0;
      while (k < keep) {
        cum += probs[k++];
        if (cum >= p.top_p) break;
      }
      keep = std::max<size_t>(k, 1);
    }
    if (p.min_p > 0.0) {
      const double floor_p = p.min_p * probs[0];  // probs[0] is the top token once sorted
      size_t k = 1;
      while (k < keep && probs[k] >= floor_p) ++k;
      keep = k;
    }
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += probs[i];
    const double u = keyed_uniform(seq.seed, static_cast<uint64_t>(seq.index),
                                   static_cast<uint64_t>(seq.num_tokens())) * total;
    double cum = 0;
    out.token = order_[keep - 1];
    for (size_t i = 0; i < keep; ++i) {
      cum += probs[i];
      if (u < cum) {
        out.token = order_[i];
        break;
      }
    }
  }
  out.logprob = static_cast<float>(work_[out.token] - log_z);
  if (p.top_logprobs > 0) {
    const size_t k = std::min<size_t>(static_cast<size_t>(p.top_logprobs), V);
    std::vector<int32_t> idx(V);
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
      return work_[a] != work_[b] ? work_[a] > work_[b] : a < b;
    });
    for (size_t i = 0; i < k; ++i)
      out.top_logprobs.emplace_back(idx[i], static_cast<float>(work_[idx[i]] - log_z));
  }
  return out;
}

}  // namespace di::engine
