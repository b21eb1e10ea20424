// Sequence: one completion being generated — its tokens, progress through the cache, block table,
// slot, sampling state and stop state. Owned by the scheduler; the KV manager edits its cache
// fields, the sampler reads it. Knows nothing of threads or of how output reaches the caller.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/sample/sampling_params.h"
#include "engine/sample/token_constraint.h"

namespace di::engine {

enum class SequenceStatus { kWaiting, kRunning, kFinished };

enum class FinishReason : int32_t {
  kNone = 0,
  kStop = 1,          // an end-of-sequence or stop token id
  kLength = 2,        // max_tokens or max_model_len
  kStopSequence = 3,  // a stop string
  kCancelled = 4,
  kError = 5,
};

const char* finish_reason_name(FinishReason reason);

struct Sequence {
  uint64_t request_id = 0;
  int32_t index = 0;        // which of the request's n completions
  int64_t arrival = 0;      // admission order; the newest running sequence is preempted first
  std::shared_ptr<const SamplingParams> params;
  uint64_t seed = 0;        // the RNG is keyed by (seed, index, position)

  std::vector<int32_t> token_ids;  // prompt then output
  int64_t num_prompt_tokens = 0;
  int64_t num_computed_tokens = 0;  // tokens whose cache entries are written
  int64_t num_cached_prompt_tokens = 0;  // prefix-cache hit at first admission
  bool admitted_once = false;
  int32_t num_preemptions = 0;

  // Cache state (KvCacheManager).
  std::vector<int32_t> block_table;
  int32_t slot = -1;
  std::vector<uint64_t> block_hashes;  // chained hashes of the full blocks known so far
  int64_t num_registered_blocks = 0;   // full blocks already findable in the prefix cache

  SequenceStatus status = SequenceStatus::kWaiting;
  FinishReason finish_reason = FinishReason::kNone;
  std::unique_ptr<TokenConstraint> constraint;
  std::unordered_map<int32_t, int32_t> output_counts;  // token -> times generated
  // Speculative decoding: the draft proposed for the tokens after the last one (never part of
  // token_ids until the target accepts them), and for a sampled request the distribution each
  // was drawn from ([draft_tokens.size()][vocab]; empty: drawn by argmax).
  std::vector<int32_t> draft_tokens;
  std::vector<float> draft_probs;
  std::vector<double> draft_confidence;  // the draft head's probability of each draft token

  int64_t num_tokens() const { return static_cast<int64_t>(token_ids.size()); }
  int64_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  bool is_prefill() const { return num_computed_tokens < num_tokens() - 1; }
  void append_token(int32_t token) {
    token_ids.push_back(token);
    ++output_counts[token];
  }
  // Undoes the last append_token (a speculative token that is tried, then taken back).
  void pop_token() {
    auto it = output_counts.find(token_ids.back());
    if (it != output_counts.end() && --it->second == 0) output_counts.erase(it);
    token_ids.pop_back();
  }
};

}  // namespace di::engine
