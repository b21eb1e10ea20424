// SampleSpec: resolving a sequence's sampling state into edits.
#include "engine/sample/sample_spec.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kernels/sampling_math.h"

namespace di::engine {

using kernels::kGreedyBelow;
using kernels::kMaxTopLogprobs;

bool SampleSpec::greedy() const { return temperature < kGreedyBelow; }

SampleSpec make_sample_spec(const Sequence& seq, int32_t row, const std::vector<int32_t>& eos_token_ids,
                            int64_t vocab_size) {
  const SamplingParams& p = *seq.params;
  SampleSpec s;
  s.row = row;
  s.temperature = p.temperature;
  s.top_p = p.top_p;
  s.top_k = p.top_k > 0 ? p.top_k : 0;
  s.min_p = p.min_p;
  s.seed = seq.seed;
  s.index = static_cast<uint64_t>(seq.index);
  s.position = static_cast<uint64_t>(seq.num_tokens());
  s.logprobs = p.logprobs || p.top_logprobs > 0;
  s.top_logprobs = std::min(p.top_logprobs, kMaxTopLogprobs);
  auto in_vocab = [&](int32_t t) { return t >= 0 && t < vocab_size; };

  std::vector<LogitEdit>& add = s.edits[static_cast<int>(LogitEditKind::kAdd)];
  std::unordered_map<int32_t, size_t> at;
  for (const auto& [id, bias] : p.logit_bias) {
    if (!in_vocab(id)) continue;
    auto [it, fresh] = at.emplace(id, add.size());
    if (fresh) add.push_back({id, bias});
    else add[it->second].value += bias;
  }
  if (seq.num_output_tokens() < p.min_tokens) {
    std::vector<LogitEdit>& ex = s.edits[static_cast<int>(LogitEditKind::kExclude)];
    std::unordered_set<int32_t> seen;
    auto exclude = [&](int32_t t) {
      if (in_vocab(t) && seen.insert(t).second) ex.push_back({t, 0});
    };
    if (!p.ignore_eos)
      for (int32_t e : eos_token_ids) exclude(e);
    for (int32_t t : p.stop_token_ids) exclude(t);
  }
  if (p.repetition_penalty != 1.0) {
    std::vector<LogitEdit>& rep = s.edits[static_cast<int>(LogitEditKind::kRepeat)];
    const auto r = static_cast<float>(p.repetition_penalty);
    std::unordered_set<int32_t> seen;
    for (int32_t t : seq.token_ids)
      if (in_vocab(t) && seen.insert(t).second) rep.push_back({t, r});
  }
  if (p.presence_penalty != 0.0 || p.frequency_penalty != 0.0) {
    std::vector<LogitEdit>& sub = s.edits[static_cast<int>(LogitEditKind::kSubtract)];
    for (const auto& [t, count] : seq.output_counts)
      if (in_vocab(t)) sub.push_back({t, static_cast<float>(p.frequency_penalty * count + p.presence_penalty)});
  }
  return s;
}

}  // namespace di::engine
