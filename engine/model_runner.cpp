// ModelRunner: batch assembly and the forward call.
#include "engine/model_runner.h"

#include <chrono>
#include <exception>
#include <string>

namespace di::engine {

namespace {

// The masks of scheduled sequences [first, first + n) that sample this step and carry a
// constraint; records which rows the model masked.
class ScheduledMasks final : public LogitsMaskSource {
 public:
  ScheduledMasks(const ScheduledSequence* first, size_t n, uint8_t* applied) : first_(first), n_(n), applied_(applied) {}
  void fill(uint32_t* words, int64_t words_per_row, uint8_t* masked) override {
    for (size_t i = 0; i < n_; ++i) {
      const ScheduledSequence& s = first_[i];
      masked[i] = s.samples() && s.seq->constraint ? 1 : 0;
      if (masked[i]) s.seq->constraint->fill_mask(words + static_cast<int64_t>(i) * words_per_row, words_per_row);
      applied_[i] = masked[i];
    }
  }

 private:
  const ScheduledSequence* first_;
  size_t n_;
  uint8_t* applied_;
};

bool any_constrained(const SchedulerOutput& out) {
  for (const ScheduledSequence& s : out.scheduled)
    if (s.samples() && s.seq->constraint) return true;
  return false;
}

}  // namespace

Status ModelRunner::execute(const SchedulerOutput& out, std::vector<float>& logits, std::vector<uint8_t>& masked) {
  const size_t n = out.scheduled.size();
  masked.assign(n, 0);
  const bool device_masks = model_->applies_logits_masks() && any_constrained(out);
  const auto vocab = static_cast<size_t>(model_->info().vocab_size);
  std::vector<PagedSequenceCache> views;
  views.reserve(n);
  ForwardBatch batch;
  for (const ScheduledSequence& s : out.scheduled) {
    views.push_back(kv_->cache_view(*s.seq));
    SequenceInput in;
    in.tokens = s.seq->token_ids.data() + s.start;
    in.num_tokens = static_cast<int32_t>(s.num_tokens);
    in.start_pos = s.start;
    in.cache = &views.back();
    batch.seqs.push_back(in);
  }
  const auto forward_began = std::chrono::steady_clock::now();
  // Set on every exit: a failed forward's time is still the step's.
  struct ForwardClock {
    std::chrono::steady_clock::time_point began;
    double* out;
    ~ForwardClock() { *out = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(); }
  } forward_clock{forward_began, &forward_seconds_};
  try {
    if (!per_sequence_) {
      ScheduledMasks masks(out.scheduled.data(), n, masked.data());
      if (device_masks) batch.masks = &masks;
      DI_RETURN_IF_ERROR(model_->forward(batch, logits));
    } else {
      logits.resize(n * vocab);
      for (size_t i = 0; i < n; ++i) {
        ForwardBatch one;
        one.seqs.push_back(batch.seqs[i]);
        ScheduledMasks masks(out.scheduled.data() + i, 1, masked.data() + i);
        if (device_masks) one.masks = &masks;
        DI_RETURN_IF_ERROR(model_->forward(one, scratch_));
        if (scratch_.size() != vocab) return Status::internal("model returned a wrong logits size");
        std::copy(scratch_.begin(), scratch_.end(), logits.begin() + i * vocab);
      }
    }
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory("forward: out of memory");
  } catch (const std::exception& e) {
    return Status::internal(std::string("forward: ") + e.what());
  }
  if (logits.size() != n * vocab)
    return Status::internal("forward: expected " + std::to_string(n * vocab) + " logits, got " +
                            std::to_string(logits.size()));
  return Status::ok();
}

}  // namespace di::engine
