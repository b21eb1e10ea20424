// DeviceSampler: see device_sampler.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/device_sampler.h"

#include <algorithm>
#include <cstring>

#include "kernels/cuda/sampling.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

namespace {

int64_t aligned(int64_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

Status DeviceSampler::sample(const float* logits, int64_t vocab, std::span<const SampleSpec> specs, void* stream,
                             std::vector<Result<SampledToken>>& out) {
  out.clear();
  if (specs.empty()) return Status::ok();
  DI_RETURN_IF_ERROR(stage(specs, vocab, stream));
  DI_RETURN_IF_ERROR(launch(logits, vocab, stream));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream));
  collect(vocab, out);
  return Status::ok();
}

Status DeviceSampler::stage(std::span<const SampleSpec> specs, int64_t vocab, void* stream) {
  const auto n = static_cast<int64_t>(specs.size());
  staged_ = n;
  if (n == 0) return Status::ok();
  int64_t num_edits = 0;
  bool any_draw = false;
  for (const SampleSpec& s : specs) {
    for (const auto& e : s.edits) num_edits += static_cast<int64_t>(e.size());
    any_draw |= !s.greedy();
  }
  rows_bytes_ = aligned(n * static_cast<int64_t>(sizeof(kc::SampleRowDesc)));
  const int64_t bytes = rows_bytes_ + aligned(std::max<int64_t>(num_edits, 1) * sizeof(kc::SampleEditDesc));
  DI_RETURN_IF_ERROR(host_.grow(bytes, "sampler"));
  auto* rows = host_.as<kc::SampleRowDesc>();
  auto* edits = reinterpret_cast<kc::SampleEditDesc*>(host_.get() + rows_bytes_);
  int32_t e = 0;
  for (int64_t i = 0; i < n; ++i) {
    const SampleSpec& s = specs[i];
    kc::SampleRowDesc& r = rows[i];
    std::memset(&r, 0, sizeof(r));
    r.temperature = s.temperature;
    r.top_p = s.top_p;
    r.min_p = s.min_p;
    r.seed = s.seed;
    r.index = s.index;
    r.position = s.position;
    r.logits_row = s.row;
    r.top_k = s.top_k;
    r.top_logprobs = std::min(s.top_logprobs, kc::kSampleTopLogprobs);
    r.flags = (s.greedy() ? kc::kSampleGreedy : 0) | (s.logprobs ? kc::kSampleLogprobs : 0);
    for (int k = 0; k < 4; ++k) {
      r.edit_begin[k] = e;
      for (const LogitEdit& d : s.edits[k]) edits[e++] = {d.token, d.value};
    }
    r.edit_begin[4] = e;
  }
  DI_RETURN_IF_ERROR(params_.reserve(bytes));
  DI_RETURN_IF_ERROR(work_.reserve(kc::sample_work_bytes(n, vocab)));
  // Greedy steps never touch the weights: keep the scratch small until a draw needs it.
  DI_RETURN_IF_ERROR(weights_.reserve(any_draw ? kc::sample_weight_bytes(n, vocab) : 8));
  const int64_t result_bytes = n * static_cast<int64_t>(sizeof(kc::SampleResultDesc));
  DI_RETURN_IF_ERROR(results_.reserve(result_bytes));
  DI_RETURN_IF_ERROR(host_results_.grow(result_bytes, "sampler"));
  return kc::copy_to_device_async(params_.get(), host_.get(), bytes, stream);
}

Status DeviceSampler::launch(const float* logits, int64_t vocab, void* stream) {
  const int64_t n = staged_;
  if (n == 0) return Status::ok();
  DI_RETURN_IF_ERROR(kc::sample_rows(logits, vocab, params_.as<kc::SampleRowDesc>(), static_cast<int32_t>(n),
                                     reinterpret_cast<const kc::SampleEditDesc*>(params_.as<uint8_t>() + rows_bytes_),
                                     work_.as<float>(), weights_.as<uint64_t>(), results_.as<kc::SampleResultDesc>(),
                                     stream));
  return kc::copy_to_host_async(host_results_.get(), results_.get(),
                                n * static_cast<int64_t>(sizeof(kc::SampleResultDesc)), stream);
}

void DeviceSampler::collect(int64_t vocab, std::vector<Result<SampledToken>>& out) const {
  out.clear();
  const auto* res = host_results_.as<const kc::SampleResultDesc>();
  out.reserve(static_cast<size_t>(staged_));
  for (int64_t i = 0; i < staged_; ++i) {
    const kc::SampleResultDesc& r = res[i];
    if (r.status == kc::kSampleNaN) {
      out.emplace_back(Status::internal("sampler: the logits contain NaN"));
      continue;
    }
    if (r.status != kc::kSampleOk || r.token < 0 || r.token >= vocab) {
      out.emplace_back(Status::internal("sampler: every token is excluded (constraint mask, min_tokens or NaN logits)"));
      continue;
    }
    SampledToken t;
    t.token = r.token;
    t.logprob = r.logprob;
    for (int32_t j = 0; j < r.num_top; ++j) t.top_logprobs.emplace_back(r.top_ids[j], r.top_logprobs[j]);
    out.emplace_back(std::move(t));
  }
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
