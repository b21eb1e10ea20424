// DeepSeek-V3's multi-token prediction on the CPU (the V3 report §2.2): the MTP layer at
// position i reads the main model's hidden row i and the token after i and predicts the token
// after that; drafts longer than one chain the same layer on its own output. See mla_model.h.
#include <algorithm>
#include <cstring>
#include <string>

#include "engine/model/deepseek_v2/mla_model.h"
#include "engine/model/deepseek_v2/moe.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"
#include "kernels/cpu/rms_norm.h"

namespace di::engine::deepseek_v2 {
namespace cpu = di::kernels::cpu;

namespace {

constexpr int32_t kLatentGroup = 0;

// The sequence's cache, except that the rows of one layer from `first` on live in scratch: a
// draft step past the known positions attends to the rows before it as the cache has them and to
// the draft's own rows, and leaves the cache as a run without drafts leaves it (those blocks
// need not even be allocated yet).
class DraftOverlayCache final : public SequenceCache {
 public:
  DraftOverlayCache(SequenceCache* base, int32_t layer, int64_t first, int64_t entry_bytes, int64_t rows)
      : base_(base), layer_(layer), first_(first), entry_bytes_(entry_bytes),
        scratch_(static_cast<size_t>(entry_bytes * std::max<int64_t>(rows, 0))) {}

  void* entry(int32_t group, int32_t layer, int64_t index) override {
    if (group != kLatentGroup || layer != layer_ || index < first_) return base_->entry(group, layer, index);
    return scratch_.data() + (index - first_) * entry_bytes_;
  }

 private:
  SequenceCache* base_;
  int32_t layer_;
  int64_t first_, entry_bytes_;
  std::vector<uint8_t> scratch_;
};

}  // namespace

std::vector<float> MlaModel::main_hidden_for_mtp(const float* final_hidden, int64_t rows) const {
  const int64_t H = config_.hidden_size;
  std::vector<float> out(static_cast<size_t>(rows * H));
  cpu::rms_norm(final_hidden, weights_->norm, rows, H, H, static_cast<float>(config_.rms_norm_eps), out.data());
  return out;
}

Status MlaModel::mtp_forward(int32_t k, const SequenceInput& seq, const float* prev_hidden, float* logits,
                             std::vector<float>* out_hidden) const {
  const MlaConfig& c = config_;
  const MlaWeights& w = *weights_;
  if (k < 0 || k >= num_mtp_layers())
    return Status::invalid_argument(w.mtp_unavailable.empty()
                                        ? "mtp_forward: the checkpoint has " + std::to_string(num_mtp_layers()) +
                                              " MTP layers, not " + std::to_string(k + 1)
                                        : "mtp_forward: MTP is unavailable: " + w.mtp_unavailable);
  const int64_t L = seq.num_tokens, H = c.hidden_size;
  if (L < 1 || !seq.tokens || !seq.cache || !prev_hidden) return Status::invalid_argument("mtp_forward: empty input");
  for (int64_t i = 0; i < L; ++i)
    if (seq.tokens[i] < 0 || seq.tokens[i] >= c.vocab_size)
      return Status::invalid_argument("mtp_forward: tokens[" + std::to_string(i) + "] = " +
                                      std::to_string(seq.tokens[i]) + " is outside the vocabulary");
  const float eps = static_cast<float>(c.rms_norm_eps);
  const MlaMtpLayerWeights& m = w.mtp_layers[k];
  const int32_t layer = c.num_hidden_layers + k;

  // x = eh_proj([enorm(embed(next)) | hnorm(h)]): the embedding half first, as the checkpoint's
  // eh_proj columns are laid out (vLLM's and SGLang's concatenation order).
  std::vector<float> eh(static_cast<size_t>(L * 2 * H));
  for (int64_t i = 0; i < L; ++i)
    std::memcpy(eh.data() + i * 2 * H, m.embed + static_cast<int64_t>(seq.tokens[i]) * H,
                static_cast<size_t>(H) * sizeof(float));
  cpu::rms_norm(eh.data(), m.enorm, L, H, 2 * H, eps, eh.data());
  for (int64_t i = 0; i < L; ++i)
    cpu::rms_norm(prev_hidden + i * H, m.hnorm, 1, H, H, eps, eh.data() + i * 2 * H + H);
  std::vector<float> x(static_cast<size_t>(L * H)), h(x.size()), out(x.size());
  cpu::linear(eh.data(), L, m.eh_proj, x.data());

  // The block: a decoder layer at the main model's positions (rope position i for the pair).
  const MlaLayerWeights& b = m.block;
  cpu::rms_norm(x.data(), b.input_layernorm, L, H, H, eps, h.data());
  mla_attention(c, b.attn, rope_, layer, kLatentGroup, seq, path_, h.data(), out.data());
  for (size_t i = 0; i < x.size(); ++i) x[i] += out[i];
  cpu::rms_norm(x.data(), b.post_attention_layernorm, L, H, H, eps, h.data());
  if (b.is_moe) {
    moe_forward(c, b.moe, h.data(), L, out.data());
  } else {
    mlp_forward(b.mlp, H, h.data(), L, out.data());
  }
  for (size_t i = 0; i < x.size(); ++i) x[i] += out[i];

  // shared_head.norm, then the head. A longer draft carries the normed rows, as the main model
  // hands over its rows after its final norm: the state hnorm was fit on (DeepSeek's shipped
  // modeling code feeds the MTP layer model.norm's output; vLLM recycles the normed rows too).
  const int64_t first = seq.all_logits || out_hidden ? 0 : L - 1, rows = L - first;
  cpu::rms_norm(x.data() + first * H, m.head_norm, rows, H, H, eps, h.data());
  const int64_t first_logit = seq.all_logits ? 0 : L - 1;
  cpu::linear(h.data() + (first_logit - first) * H, L - first_logit, H, m.head, c.vocab_size, logits);
  if (out_hidden) *out_hidden = std::move(h);
  return Status::ok();
}

Status MlaModel::drafts_supported() const {
  if (num_mtp_layers() > 0) return Status::ok();
  return Status::unsupported(
      info_.family + ": speculative decoding needs the checkpoint's MTP layers: " +
      (weights_->mtp_unavailable.empty() ? std::string("it has none (num_nextn_predict_layers 0)")
                                         : weights_->mtp_unavailable));
}

Status MlaModel::propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) {
  DI_RETURN_IF_ERROR(drafts_supported());
  const MlaConfig& c = config_;
  const int64_t H = c.hidden_size, V = c.vocab_size;
  const int32_t mtp_layer = c.num_hidden_layers;  // MTP layer 0's latent rows
  const int64_t entry_bytes = groups_[kLatentGroup].entry_bytes;
  std::vector<float> logits(static_cast<size_t>(V)), out;
  for (size_t s = 0; s < inputs.size(); ++s) {
    const DraftInput& in = inputs[s];
    if (in.batch_index < 0 || static_cast<size_t>(in.batch_index) >= hidden_.size() || !in.cache)
      return Status::invalid_argument("propose_drafts: input " + std::to_string(s) + " names no kept forward row");
    const std::vector<float>& hidden = hidden_[in.batch_index];
    if (in.num_positions < 1 || static_cast<int64_t>(hidden.size()) < in.num_positions * H || !in.next_tokens)
      return Status::invalid_argument("propose_drafts: input " + std::to_string(s) +
                                      " has more positions than its forward kept");
    // Every known position writes its MTP row, as a run without drafts does.
    const std::vector<float> prev = main_hidden_for_mtp(hidden.data(), in.num_positions);
    const SequenceInput known{in.next_tokens, in.num_positions, in.start_pos, in.cache, false, false};
    DI_RETURN_IF_ERROR(mtp_forward(0, known, prev.data(), logits.data(), in.max_drafts > 0 ? &out : nullptr));
    if (in.max_drafts < 1) continue;
    int32_t token = chooser.choose(s, 0, logits);
    const int64_t first = in.start_pos + in.num_positions;
    DraftOverlayCache overlay(in.cache, mtp_layer, first, entry_bytes, in.max_drafts - 1);
    for (int32_t j = 1; j < in.max_drafts && token >= 0; ++j) {
      const std::vector<float> last(out.end() - H, out.end());
      const SequenceInput step{&token, 1, first + j - 1, &overlay, false, false};
      DI_RETURN_IF_ERROR(mtp_forward(0, step, last.data(), logits.data(), &out));
      token = chooser.choose(s, j, logits);
    }
  }
  return Status::ok();
}

}  // namespace di::engine::deepseek_v2
