// DeviceSampler: draws a step's tokens where its logits are. Packs the SampleSpecs (knobs, RNG
// keys, edits) into one pinned buffer, uploads it with one copy, runs kernels::cuda::sample_rows
// behind the forward on the same stream, and brings back only the chosen ids and the requested
// logprobs. One per model, used by the step thread only. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/model/cuda/pinned_buffer.h"
#include "engine/sample/sample_spec.h"
#include "engine/sample/sampler.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/sampling.h"

namespace di::engine::cuda {

class DeviceSampler {
 public:
  // Enqueues the draws of `specs` over device `logits` (rows `vocab` floats apart) on `stream`,
  // waits for them, and fills `out` (one per spec). A row with no drawable token, or with NaN
  // logits, gets the CPU sampler's error in its slot.
  Status sample(const float* logits, int64_t vocab, std::span<const SampleSpec> specs, void* stream,
                std::vector<Result<SampledToken>>& out);

  // sample() in three parts, for a step that draws more after these draws without waiting:
  // stage() packs and uploads `specs` (nothing may change the host copy until the stream has
  // taken it, so a second batch of draws in flight needs a sampler of its own); launch() enqueues
  // the draws over `logits` and the copy of their results to the host; once the stream has
  // reached that copy, collect() reads them. Between stage() and launch() a kernel may rewrite
  // the staged rows (device_rows()), and after launch() read the results (device_results()).
  Status stage(std::span<const SampleSpec> specs, int64_t vocab, void* stream);
  Status launch(const float* logits, int64_t vocab, void* stream);
  void collect(int64_t vocab, std::vector<Result<SampledToken>>& out) const;
  kernels::cuda::SampleRowDesc* device_rows() const { return params_.as<kernels::cuda::SampleRowDesc>(); }
  const kernels::cuda::SampleResultDesc* device_results() const {
    return results_.as<const kernels::cuda::SampleResultDesc>();
  }

 private:
  PinnedBuffer host_;  // rows, then edits; results come back to host_results_
  PinnedBuffer host_results_;
  kernels::cuda::DeviceBuffer params_, work_, weights_, results_;
  int64_t staged_ = 0, rows_bytes_ = 0;  // the staged draws and the bytes of their rows
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
