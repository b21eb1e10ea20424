// V4CudaModel's speculative decode step without host round trips between its parts
// (Model::verify_greedy): everything is enqueued on the model's stream in this order, so the
// device runs it back to back while the host prepares the next part:
//   the forward (step_; a CUDA graph for decode-sized steps) and its final streams (kept_),
//   sampler_'s greedy draws of all its rows,
//   draft_sampler_'s rows staged (one per sequence, its logits row still unknown),
//   the MTP pass's step (mtp_step_) uploaded with the fed tokens as placeholders, then
//   accept_greedy_drafts: the accepted counts, the true next tokens written over the MTP step's
//   ids and each draft pick's logits row (the sequence's last known position),
//   the MTP pass over every fed row (a CUDA graph like the forward's),
//   the draft picks, and the copies of the draws, the picks and the accepted counts to the host;
// then one wait. See v4_cuda_model.h.
#ifdef DI_WITH_CUDA

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "engine/model/deepseek_v4/v4_cuda_model.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/spec_accept.h"

namespace di::engine::deepseek_v4 {
namespace kc = di::kernels::cuda;

Status V4CudaModel::verify_greedy(const ForwardBatch& batch, std::span<GreedyVerify> seqs) {
  DI_RETURN_IF_ERROR(drafts_supported());
  const DeepseekV4Config& c = config_;
  const int64_t width = int64_t{c.hc_mult} * c.hidden_size, V = c.vocab_size;
  const auto S = static_cast<int64_t>(batch.seqs.size());
  if (static_cast<int64_t>(seqs.size()) != S) return Status::invalid_argument("verify_greedy: one entry per sequence");
  if (batch.masks) return Status::invalid_argument("verify_greedy: constraint masks are drawn on the host");
  if (S == 0) return Status::ok();
  for (int64_t s = 0; s < S; ++s) {
    const SequenceInput& in = batch.seqs[s];
    const GreedyVerify& v = seqs[s];
    const std::string where = "verify_greedy: sequence " + std::to_string(s);
    if (v.num_draft < 0 || in.num_tokens != v.num_draft + 1 || (v.num_draft > 0 && !in.all_logits) || !in.keep_hidden)
      return Status::invalid_argument(where + " is not its last token and its draft with every row kept");
    bool edits = false;
    for (const auto& e : v.spec.edits) edits |= !e.empty();
    if (!v.spec.greedy() || edits) return Status::invalid_argument(where + " is not a greedy draw without logit edits");
  }
  int64_t rows = 0;
  DI_ASSIGN_OR_RETURN(float* logits, enqueue_forward(batch, &rows));
  // Every row is a logits row (one token, or a draft with all_logits): rows are step rows.
  verify_specs_.clear();
  draft_specs_.clear();
  int64_t row = 0;
  for (int64_t s = 0; s < S; ++s) {
    for (int32_t j = 0; j <= seqs[s].num_draft; ++j) {
      verify_specs_.push_back(seqs[s].spec);
      verify_specs_.back().row = static_cast<int32_t>(row + j);
    }
    // The chooser's pick: the argmax with its probability at temperature 1.
    SampleSpec d = seqs[s].spec;
    d.logprobs = true;
    d.top_logprobs = 0;
    d.row = static_cast<int32_t>(row);  // accept_greedy_drafts moves it to the last known position
    draft_specs_.push_back(std::move(d));
    row += seqs[s].num_draft + 1;
  }
  if (row != rows) return Status::internal("verify_greedy: the forward laid out " + std::to_string(rows) + " logits rows for " + std::to_string(row) + " fed tokens");
  DI_RETURN_IF_ERROR(sampler_.stage(verify_specs_, V, stream_));
  DI_RETURN_IF_ERROR(sampler_.launch(logits, V, stream_));
  DI_RETURN_IF_ERROR(draft_sampler_.stage(draft_specs_, V, stream_));
  DI_RETURN_IF_ERROR(accepted_host_.grow(S * 4, "accepted"));
  DI_RETURN_IF_ERROR(accepted_dev_.reserve(S * 4));
  // The MTP pass over every fed row: row r's streams are the forward's row r (kept_, the same
  // step order), its next token the target's draw there.
  const kc::TokenBatch verify = step_.device();
  ForwardBatch known = batch;
  known.masks = nullptr;
  bool all_rows = false;
  DI_RETURN_IF_ERROR(mtp_pass(known, mtp_groups(), [&]() -> Status {
    // Timed from here, where the pass's device work follows at once (its step was packed while
    // the forward ran): the host's packing time is not the pass's.
    DI_RETURN_IF_ERROR(draft_pass_timer_.start(stream_));
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemcpyAsync(m_.gathered, kept_.get(), static_cast<size_t>(rows * width * 4),
                                                       cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream_)),
                                       "cudaMemcpyAsync (verify streams)"));
    return kc::accept_greedy_drafts(verify, static_cast<int32_t>(S), sampler_.device_results(), V,
                                    accepted_dev_.as<int32_t>(), mtp_step_.device_ids(), draft_sampler_.device_rows(),
                                    stream_);
  }, true, &all_rows));
  DI_RETURN_IF_ERROR(draft_sampler_.launch(logits_dev_.as<float>(), V, stream_));
  DI_RETURN_IF_ERROR(draft_pass_timer_.stop(stream_));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(accepted_host_.get(), accepted_dev_.get(), S * 4, stream_));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));  // the step's one wait
  DI_RETURN_IF_ERROR(check_forward());
  sampler_.collect(V, verify_drawn_);
  draft_sampler_.collect(V, draft_drawn_);
  row = 0;
  for (int64_t s = 0; s < S; ++s) {
    GreedyVerify& v = seqs[s];
    v.accepted = accepted_host_.as<int32_t>()[s];
    if (v.accepted < 0 || v.accepted > v.num_draft)
      return Status::internal("verify_greedy: accepted count " + std::to_string(v.accepted) + " out of range");
    v.drawn.clear();
    for (int32_t j = 0; j <= v.accepted; ++j) v.drawn.push_back(std::move(verify_drawn_[row + j]));
    v.draft = std::move(draft_drawn_[s]);
    row += v.num_draft + 1;
  }
  return Status::ok();
}

Status V4CudaModel::extend_drafts(std::span<const DraftInput> inputs, std::span<const int32_t> first,
                                  DraftChooser& chooser) {
  DI_RETURN_IF_ERROR(drafts_supported());
  const DeepseekV4Config& c = config_;
  const int64_t width = int64_t{c.hc_mult} * c.hidden_size, V = c.vocab_size, W = c.sliding_window;
  const auto S = static_cast<int64_t>(inputs.size());
  if (S == 0) return Status::ok();
  if (static_cast<int64_t>(first.size()) != S) return Status::invalid_argument("extend_drafts: one first token per input");
  std::vector<int32_t> steps(static_cast<size_t>(S), 0), token(first.begin(), first.end());
  int64_t max_steps = 0;
  for (int64_t s = 0; s < S; ++s) {
    const DraftInput& in = inputs[s];
    const std::string where = "extend_drafts: input " + std::to_string(s);
    if (in.batch_index < 0 || static_cast<size_t>(in.batch_index) >= kept_row0_.size() ||
        kept_row0_[in.batch_index] < 0 || !in.cache)
      return Status::invalid_argument(where + " names no row of the last verify_greedy");
    if (in.num_positions < 1 || in.num_positions > kept_rows_[in.batch_index])
      return Status::invalid_argument(where + " has more positions than its verify step fed");
    if (token[s] >= V) return Status::invalid_argument(where + ": its first token is outside the vocabulary");
    // A negative first token: no draft for this input.
    steps[s] = token[s] >= 0 && in.max_drafts > 1 ? static_cast<int32_t>(std::min<int64_t>(in.max_drafts, W)) - 1 : 0;
    max_steps = std::max<int64_t>(max_steps, steps[s]);
  }
  if (max_steps == 0) return Status::ok();
  DI_RETURN_IF_ERROR(reserve_draft_state(S, S * max_steps));
  // The MTP pass of verify_greedy left its output streams in a_.streams, in the forward's rows.
  for (int64_t s = 0; s < S; ++s) {
    const int64_t last = kept_row0_[inputs[s].batch_index] + inputs[s].num_positions - 1;
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemcpyAsync(m_.drafts + s * width, a_.streams + last * width,
                                                       static_cast<size_t>(width * 4), cudaMemcpyDeviceToDevice,
                                                       static_cast<cudaStream_t>(stream_)),
                                       "cudaMemcpyAsync (draft streams)"));
  }
  return run_draft_steps(inputs, steps, max_steps, token, chooser);
}

}  // namespace di::engine::deepseek_v4

#endif  // DI_WITH_CUDA
