// Sampling on the device: for each row of a batch, the logit edits (bias, min_tokens, penalties),
// then greedy or the fixed-point draw of kernels/sampling_math.h (top-k, top-p, min-p,
// temperature), the chosen token's logprob and the top logprobs — the same arithmetic as the CPU
// sampler, so both pick the same token. Only the results cross to the host. Host-only header.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

constexpr int32_t kSampleTopLogprobs = 20;

enum SampleRowFlags : int32_t { kSampleGreedy = 1, kSampleLogprobs = 2 };

// One draw. Edits [edit_begin[k], edit_begin[k + 1]) of the batch's edit array are of kind k
// (0 add, 1 exclude, 2 repetition, 3 subtract; engine/sample/sample_spec.h), each kind to distinct
// tokens.
struct SampleRowDesc {
  double temperature, top_p, min_p;
  uint64_t seed, index, position;
  int32_t logits_row;
  int32_t top_k;         // 0: off
  int32_t top_logprobs;  // 0..kSampleTopLogprobs
  int32_t flags;         // SampleRowFlags
  int32_t edit_begin[5];
  int32_t pad_;
};

struct SampleEditDesc {
  int32_t token;
  float value;
};

enum SampleStatus : int32_t { kSampleOk = 0, kSampleAllExcluded = 1, kSampleNaN = 2 };

struct SampleResultDesc {
  int32_t token;
  int32_t status;  // SampleStatus
  float logprob;
  int32_t num_top;
  int32_t top_ids[kSampleTopLogprobs];
  float top_logprobs[kSampleTopLogprobs];
};

// Bytes of the per-row scratch `sample_rows` needs: `work` (processed logits) and `weights`.
inline int64_t sample_work_bytes(int64_t num_rows, int64_t vocab) { return num_rows * vocab * 4; }
inline int64_t sample_weight_bytes(int64_t num_rows, int64_t vocab) { return num_rows * vocab * 8; }

// Draws rows[0..num_rows) from `logits` (row r.logits_row, `vocab` floats apart) into out[i].
// All pointers are device memory; `work` and `weights` hold sample_work_bytes / sample_weight_bytes.
// `stream` is a cudaStream_t. Errors: invalid arguments or the launch's device error.
Status sample_rows(const float* logits, int64_t vocab, const SampleRowDesc* rows, int32_t num_rows,
                   const SampleEditDesc* edits, float* work, uint64_t* weights, SampleResultDesc* out, void* stream);

}  // namespace di::kernels::cuda
