// ModelRunner: batch assembly, the forward call and the step's draws.
#include "engine/model_runner.h"

#include <chrono>
#include <exception>
#include <string>

namespace di::engine {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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

bool any_constrained(const ScheduledSequence* first, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (first[i].samples() && first[i].seq->constraint) return true;
  return false;
}

}  // namespace

// One forward over scheduled sequences [first, first + n) (their logits rows start at
// `row_offset` in the step's numbering) and the draws of `tasks`, all of which read those rows.
Status ModelRunner::run(const ForwardBatch& batch, const ScheduledSequence* first, size_t n,
                        std::span<const SampleTask> tasks, int32_t row_offset,
                        std::vector<Result<SampledToken>>& results) {
  const auto vocab = static_cast<size_t>(model_->info().vocab_size);
  masked_.assign(n, 0);
  ScheduledMasks masks(first, n, masked_.data());
  ForwardBatch b = batch;
  if (model_->applies_logits_masks() && any_constrained(first, n)) b.masks = &masks;
  const bool on_device = model_->samples_on_device();
  auto t0 = Clock::now();
  if (on_device) {
    specs_.clear();
    for (const SampleTask& t : tasks)
      specs_.push_back(make_sample_spec(*t.seq, t.row - row_offset, sampler_->eos_token_ids(),
                                        static_cast<int64_t>(vocab)));
    timing_.prepare_s += seconds_since(t0);
    t0 = Clock::now();
    std::vector<Result<SampledToken>> drawn;
    DI_RETURN_IF_ERROR(model_->forward_sample(b, specs_, drawn));
    timing_.forward_s += seconds_since(t0);
    if (drawn.size() != tasks.size()) return Status::internal("forward_sample: wrong number of draws");
    for (auto& r : drawn) results.push_back(std::move(r));
    return Status::ok();
  }
  DI_RETURN_IF_ERROR(model_->forward(b, logits_));
  timing_.forward_s += seconds_since(t0);
  if (logits_.size() != n * vocab)
    return Status::internal("forward: expected " + std::to_string(n * vocab) + " logits, got " +
                            std::to_string(logits_.size()));
  t0 = Clock::now();
  for (const SampleTask& t : tasks) {
    const size_t row = static_cast<size_t>(t.row - row_offset);
    results.push_back(sampler_->sample(std::span<const float>(logits_.data() + row * vocab, vocab), *t.seq,
                                       masked_[row] != 0));
  }
  timing_.sample_s += seconds_since(t0);
  return Status::ok();
}

Status ModelRunner::execute(const SchedulerOutput& out, std::span<const SampleTask> tasks,
                            std::vector<Result<SampledToken>>& results) {
  timing_ = {};
  const auto t0 = Clock::now();
  results.clear();
  results.reserve(tasks.size());
  const size_t n = out.scheduled.size();
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
  timing_.prepare_s += seconds_since(t0);
  try {
    if (!per_sequence_) return run(batch, out.scheduled.data(), n, tasks, 0, results);
    // Tasks come grouped by row, rows ascending.
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      ForwardBatch one;
      one.seqs.push_back(batch.seqs[i]);
      size_t end = k;
      while (end < tasks.size() && tasks[end].row == static_cast<int32_t>(i)) ++end;
      DI_RETURN_IF_ERROR(run(one, out.scheduled.data() + i, 1, tasks.subspan(k, end - k), static_cast<int32_t>(i),
                             results));
      k = end;
    }
    if (k != tasks.size()) return Status::internal("model runner: sample tasks out of row order");
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory("forward: out of memory");
  } catch (const std::exception& e) {
    return Status::internal(std::string("forward: ") + e.what());
  }
  return Status::ok();
}

}  // namespace di::engine
