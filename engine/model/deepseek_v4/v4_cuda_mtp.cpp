// V4CudaModel's speculative decoding: the final streams a forward keeps, and the MTP layer's
// passes over the known positions and the draft steps (DeepseekV4Model::propose_drafts on the
// device). See v4_cuda_model.h.
#ifdef DI_WITH_CUDA

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "engine/model/cuda/graph_buckets.h"
#include "engine/model/deepseek_v4/v4_cuda_model.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/hyper_connection.h"
#include "kernels/cuda/mtp_input.h"

namespace di::engine::deepseek_v4 {
namespace kc = di::kernels::cuda;
using kc::DType;
using namespace v4_cuda;

// The final streams (before the hc head) of the sequences that asked for them: the MTP layer's
// input in propose_drafts(). One copy of the step's rows, in step order.
Status V4CudaModel::keep_hidden(const ForwardBatch& batch) {
  const int64_t S = static_cast<int64_t>(batch.seqs.size()), width = int64_t{config_.hc_mult} * config_.hidden_size;
  kept_row0_.assign(static_cast<size_t>(S), -1);
  kept_rows_.assign(static_cast<size_t>(S), 0);
  bool any = false;
  int64_t row = 0;
  for (int64_t b = 0; b < S; ++b) {
    const SequenceInput& in = batch.seqs[b];
    if (in.keep_hidden && has_mtp_) {
      kept_row0_[b] = row;
      kept_rows_[b] = in.num_tokens;
      any = true;
    }
    row += in.num_tokens;
  }
  if (!any) return Status::ok();
  const int64_t bytes = row * width * 4;
  if (bytes > kept_.bytes()) DI_RETURN_IF_ERROR(kept_.allocate(std::max(bytes, kept_.bytes() * 3 / 2)));
  return kc::cuda_status(cudaMemcpyAsync(kept_.get(), a_.streams, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                         static_cast<cudaStream_t>(stream_)),
                         "cudaMemcpyAsync (kept streams)");
}

Status V4CudaModel::drafts_supported() const {
  if (has_mtp_) return Status::ok();
  return Status::unsupported("deepseek_v4: speculative decoding needs the checkpoint's MTP layers: " +
                             (mtp_unavailable_.empty() ? std::string("it has none (num_nextn_predict_layers 0)")
                                                       : mtp_unavailable_));
}

Status V4CudaModel::reserve_mtp(int64_t rows) {
  const int64_t width = int64_t{config_.hc_mult} * config_.hidden_size, H = config_.hidden_size;
  const int64_t parts[] = {rows * width, rows * width, rows * H};
  int64_t floats = 0;
  for (int64_t n : parts) floats += (n + 63) / 64 * 64;
  if (floats * 4 > mtp_ws_.bytes()) DI_RETURN_IF_ERROR(mtp_ws_.allocate(std::max(floats * 4, mtp_ws_.bytes() * 3 / 2)));
  float* p = mtp_ws_.as<float>();
  float** dst[] = {&m_.gathered, &m_.normed, &m_.embed};
  for (int i = 0; i < 3; ++i) {
    *dst[i] = p;
    p += (parts[i] + 63) / 64 * 64;
  }
  return Status::ok();
}

Status V4CudaModel::reserve_draft_state(int64_t seqs, int64_t saved_rows) {
  const int64_t width = int64_t{config_.hc_mult} * config_.hidden_size;
  const int64_t a = (seqs * width + 63) / 64 * 64, b = std::max<int64_t>(1, saved_rows * config_.head_dim);
  if ((a + b) * 4 > mtp_state_.bytes()) DI_RETURN_IF_ERROR(mtp_state_.allocate((a + b) * 4));
  m_.drafts = mtp_state_.as<float>();
  m_.saved = m_.drafts + a;
  return Status::ok();
}

Status V4CudaModel::run_mtp(const float* hidden) {
  const DeepseekV4Config& c = config_;
  const int64_t T = rows_, H = c.hidden_size, hc = c.hc_mult;
  const float eps = static_cast<float>(c.rms_norm_eps);
  // x[i, s] = e_proj(enorm(embed(next[i]))) + h_proj(hnorm(hidden[i, s])), as DeepseekV4Model::mtp_forward.
  // h_proj maps each stream alike: one product over the T * hc stream rows, not one per stream.
  DI_RETURN_IF_ERROR(kc::rms_norm(hidden, mtp_.hnorm, m_.normed, T * hc, 1, H, H, eps, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(project(mtp_.h_proj, m_.normed, H, nullptr, T * hc, a_.streams, H));
  DI_RETURN_IF_ERROR(kc::hc_embed(cur_->device().ids, T, embed_, H, 1, dtype_, m_.embed, stream_));
  DI_RETURN_IF_ERROR(kc::rms_norm(m_.embed, mtp_.enorm, m_.embed, T, 1, H, H, eps, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(project(mtp_.e_proj, m_.embed, H, nullptr, T, a_.x, H));
  DI_RETURN_IF_ERROR(kc::add_to_streams(a_.streams, a_.x, T, static_cast<int32_t>(hc), H, stream_));
  DI_RETURN_IF_ERROR(run_layer(c.num_hidden_layers, grouped_pairs_ > 0));
  return head(mtp_.head, mtp_.norm);
}

Status V4CudaModel::mtp_pass(ForwardBatch& batch, const std::vector<CacheGroupSpec>& groups,
                             const std::function<Status()>& fill, bool every_row, bool* all_rows) {
  const DeepseekV4Config& c = config_;
  const int64_t width = int64_t{c.hc_mult} * c.hidden_size;
  int64_t tokens = 0;
  bool small = !enforce_eager_;
  for (const SequenceInput& in : batch.seqs) {
    tokens += in.num_tokens;
    small &= in.num_tokens <= kVerifyGraphMaxTokens;
  }
  const auto S = static_cast<int64_t>(batch.seqs.size());
  const int32_t bucket = small ? cuda::graph_bucket(tokens) : -1, seq_bucket = small ? cuda::graph_bucket(S) : -1;
  const bool graph = bucket > 0 && seq_bucket > 0 && int64_t{bucket} * c.num_experts_per_tok <= kGroupedPairsMax;
  // In a graph every row is a logits row, so the padded step's rows line up with its logits rows.
  for (SequenceInput& in : batch.seqs) in.all_logits = graph || every_row;
  *all_rows = graph || every_row;
  cur_ = &mtp_step_;
  DI_RETURN_IF_ERROR(mtp_step_.pack(batch, groups, graph ? bucket : 0, graph ? seq_bucket : 0));
  const int64_t T = mtp_step_.device().num_tokens;
  const int64_t ctx = graph ? cuda::context_bucket(mtp_step_.max_end()) : mtp_step_.max_end();
  const void* ws_before = mtp_ws_.get();
  DI_RETURN_IF_ERROR(reserve_mtp(T));
  bool moved_ws = false, moved_meta = false;
  DI_RETURN_IF_ERROR(reserve(T, ctx, graph ? T : (every_row ? tokens : S), &moved_ws));
  DI_RETURN_IF_ERROR(mtp_step_.upload(stream_, &moved_meta));
  DI_RETURN_IF_ERROR(fill());
  // Padding rows read zeros (finite, so their routing stays in range), not stale memory.
  if (T > tokens)
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemsetAsync(m_.gathered + tokens * width, 0,
                                                       static_cast<size_t>((T - tokens) * width * 4),
                                                       static_cast<cudaStream_t>(stream_)),
                                       "cudaMemsetAsync (draft padding)"));
  // The graphs point at the workspaces and the step buffers: recapture them if they moved.
  if (moved_ws || moved_meta || mtp_ws_.get() != ws_before) graphs_.clear();
  if (graph) {
    // -1: the MTP layer's pass, not a forward of the main layers.
    DI_RETURN_IF_ERROR(graphs_.launch({-1, rows_, seq_bucket, max_end_}, stream_, [&] { return run_mtp(m_.gathered); }));
  } else {
    DI_RETURN_IF_ERROR(run_mtp(m_.gathered));
  }
  return bad_id_.copy_to_host(stream_);
}

std::vector<CacheGroupSpec> V4CudaModel::mtp_groups() const {
  // The MTP layer reads and writes only its swa_kv rows: the step's room check skips the other
  // groups, whose blocks may end before the draft positions.
  std::vector<CacheGroupSpec> groups = groups_;
  for (size_t g = 0; g < groups.size(); ++g)
    if (static_cast<int32_t>(g) != layout_.swa_kv) {
      groups[g].kind = CacheKind::kStateSlot;
      groups[g].state_entries = 0;
    }
  return groups;
}

Status V4CudaModel::propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) {
  DI_RETURN_IF_ERROR(drafts_supported());
  const DeepseekV4Config& c = config_;
  const int64_t H = c.hidden_size, width = int64_t{c.hc_mult} * H, V = c.vocab_size, W = c.sliding_window;
  const auto S = static_cast<int64_t>(inputs.size());
  if (S == 0) return Status::ok();
  auto copy = [&](void* dst, const void* src, int64_t bytes) {
    return kc::cuda_status(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                           static_cast<cudaStream_t>(stream_)),
                           "cudaMemcpyAsync (drafts)");
  };
  // Draft steps past the known positions, each input's (its ring rows there are saved first).
  std::vector<int32_t> steps(static_cast<size_t>(S), 0);
  ForwardBatch known;
  int64_t max_steps = 0;
  for (int64_t s = 0; s < S; ++s) {
    const DraftInput& in = inputs[s];
    const std::string where = "propose_drafts: input " + std::to_string(s);
    if (in.batch_index < 0 || static_cast<size_t>(in.batch_index) >= kept_row0_.size() ||
        kept_row0_[in.batch_index] < 0 || !in.cache)
      return Status::invalid_argument(where + " names no kept forward row");
    if (in.num_positions < 1 || in.num_positions > kept_rows_[in.batch_index] || !in.next_tokens)
      return Status::invalid_argument(where + " has more positions than its forward kept");
    for (int32_t i = 0; i < in.num_positions; ++i)
      if (in.next_tokens[i] < 0 || in.next_tokens[i] >= V)
        return Status::invalid_argument(where + ": next token " + std::to_string(i) + " is outside the vocabulary");
    SequenceInput si;
    si.tokens = in.next_tokens;
    si.num_tokens = in.num_positions;
    si.start_pos = in.start_pos;
    si.cache = in.cache;
    known.seqs.push_back(si);
    steps[s] = in.max_drafts > 0 ? static_cast<int32_t>(std::min<int64_t>(in.max_drafts, W)) - 1 : 0;
    max_steps = std::max<int64_t>(max_steps, steps[s]);
  }
  DI_RETURN_IF_ERROR(reserve_draft_state(S, S * max_steps));
  // The known positions: every row the main model kept for them, gathered in input order.
  bool all_rows = false;
  DI_RETURN_IF_ERROR(mtp_pass(known, mtp_groups(), [&]() -> Status {
    int64_t row = 0;
    for (const DraftInput& in : inputs) {
      DI_RETURN_IF_ERROR(copy(m_.gathered + row * width, kept_.as<float>() + kept_row0_[in.batch_index] * width,
                              in.num_positions * width * 4));
      row += in.num_positions;
    }
    return Status::ok();
  }, false, &all_rows));
  bool any_drafts = false;
  int64_t row = 0;
  std::vector<int64_t> last_row(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) {
    row += inputs[s].num_positions;
    last_row[s] = row - 1;
    any_drafts |= inputs[s].max_drafts > 0;
    // The streams of its last position: the input of its first draft step.
    if (inputs[s].max_drafts > 1) DI_RETURN_IF_ERROR(copy(m_.drafts + s * width, a_.streams + (row - 1) * width, width * 4));
  }
  if (!any_drafts) {
    DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));
    return check_forward();
  }
  // A row per position (a graphed pass) or per input.
  const int64_t rows = all_rows ? row : S;
  draft_logits_.resize(static_cast<size_t>(rows * V));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(draft_logits_.data(), logits_dev_.get(), rows * V * 4, stream_));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));
  DI_RETURN_IF_ERROR(check_forward());
  std::vector<int32_t> token(static_cast<size_t>(S), -1);
  for (int64_t s = 0; s < S; ++s)
    if (inputs[s].max_drafts > 0)
      token[s] = chooser.choose(static_cast<size_t>(s), 0,
                                std::span<const float>(draft_logits_.data() + (all_rows ? last_row[s] : s) * V, V));
  return run_draft_steps(inputs, steps, max_steps, token, chooser);
}

Status V4CudaModel::run_draft_steps(std::span<const DraftInput> inputs, const std::vector<int32_t>& steps,
                                    int64_t max_steps, std::vector<int32_t>& token, DraftChooser& chooser) {
  const DeepseekV4Config& c = config_;
  const int64_t width = int64_t{c.hc_mult} * c.hidden_size, V = c.vocab_size, W = c.sliding_window, hd = c.head_dim;
  const int32_t mtp_layer = c.num_hidden_layers;  // the swa_kv rows of MTP layer 0
  const auto S = static_cast<int64_t>(inputs.size());
  if (max_steps == 0) return Status::ok();
  auto copy = [&](void* dst, const void* src, int64_t bytes) {
    return kc::cuda_status(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                           static_cast<cudaStream_t>(stream_)),
                           "cudaMemcpyAsync (drafts)");
  };
  auto rows_to_host = [&](int64_t n) -> Status {
    draft_logits_.resize(static_cast<size_t>(n * V));
    DI_RETURN_IF_ERROR(kc::copy_to_host_async(draft_logits_.data(), logits_dev_.get(), n * V * 4, stream_));
    DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));
    return check_forward();
  };
  const std::vector<CacheGroupSpec> groups = mtp_groups();
  // Draft steps write the MTP layer's ring at positions past the known ones: save those rows and
  // put them back, so the cache is what a run without drafts leaves.
  std::vector<uint8_t*> ring_rows(static_cast<size_t>(S * max_steps), nullptr);
  auto first_of = [&](int64_t s) { return inputs[s].start_pos + inputs[s].num_positions; };
  for (int64_t s = 0; s < S; ++s)
    if (token[s] >= 0)
      for (int32_t j = 1; j <= steps[s]; ++j) {
        auto* e = static_cast<uint8_t*>(inputs[s].cache->entry(layout_.swa_kv, mtp_layer, (first_of(s) + j - 1) % W));
        ring_rows[s * max_steps + j - 1] = e;
        DI_RETURN_IF_ERROR(copy(m_.saved + (s * max_steps + j - 1) * hd, e, hd * 4));
      }
  Status st = Status::ok();
  std::vector<int64_t> active;
  bool all_rows = false;
  for (int32_t j = 1; j <= max_steps && st.is_ok(); ++j) {
    active.clear();
    for (int64_t s = 0; s < S; ++s)
      if (token[s] >= 0 && j <= steps[s]) active.push_back(s);
    if (active.empty()) break;
    ForwardBatch step;
    for (int64_t s : active) {
      SequenceInput si;
      si.tokens = &token[s];
      si.num_tokens = 1;
      si.start_pos = first_of(s) + j - 1;
      si.cache = inputs[s].cache;
      step.seqs.push_back(si);
    }
    const auto A = static_cast<int64_t>(active.size());
    st = mtp_pass(step, groups, [&]() -> Status {
      for (int64_t r = 0; r < A; ++r) DI_RETURN_IF_ERROR(copy(m_.gathered + r * width, m_.drafts + active[r] * width, width * 4));
      return Status::ok();
    }, false, &all_rows);
    for (int64_t r = 0; r < A && st.is_ok(); ++r) st = copy(m_.drafts + active[r] * width, a_.streams + r * width, width * 4);
    if (st.is_ok()) st = rows_to_host(A);  // one token each: row r is active[r]'s either way
    for (int64_t r = 0; r < A && st.is_ok(); ++r)
      token[active[r]] = chooser.choose(static_cast<size_t>(active[r]), j,
                                        std::span<const float>(draft_logits_.data() + r * V, V));
  }
  // Put the saved rows back even after a failed step: the cache must not keep a draft's rows.
  for (size_t i = 0; i < ring_rows.size(); ++i)
    if (ring_rows[i]) {
      const Status put = copy(ring_rows[i], m_.saved + static_cast<int64_t>(i) * hd, hd * 4);
      if (st.is_ok()) st = put;
    }
  return st;
}

}  // namespace di::engine::deepseek_v4

#endif  // DI_WITH_CUDA
