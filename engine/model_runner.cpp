// ModelRunner: batch assembly and the forward call.
#include "engine/model_runner.h"

#include <exception>
#include <string>

namespace di::engine {

Status ModelRunner::execute(const SchedulerOutput& out, std::vector<float>& logits) {
  const size_t n = out.scheduled.size();
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
  try {
    if (!per_sequence_) {
      DI_RETURN_IF_ERROR(model_->forward(batch, logits));
    } else {
      logits.resize(n * vocab);
      for (size_t i = 0; i < n; ++i) {
        ForwardBatch one;
        one.seqs.push_back(batch.seqs[i]);
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
