// DeepseekV4Model: cache groups, the layer loop, final head. See v4_model.h.
#include "engine/model/deepseek_v4/v4_model.h"

#include <algorithm>
#include <cstring>

#include "engine/model/batch_check.h"
#include "engine/model/deepseek_v4/hyper_connection.h"
#include "engine/model/deepseek_v4/moe.h"
#ifdef DI_WITH_CUDA
#include "engine/model/deepseek_v4/v4_cuda_model.h"
#endif
#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/threads.h"

namespace di::engine::deepseek_v4 {

DeepseekV4Model::DeepseekV4Model(DeepseekV4Config config,
                                 std::unique_ptr<DeepseekV4Weights> weights,
                                 std::string model_dir)
    : config_(std::move(config)), weights_(std::move(weights)) {
  const DeepseekV4Config& c = config_;
  info_ = model_info_from("deepseek_v4", std::move(model_dir), c);
  ropes_.main = Rope(c.rope_main);
  ropes_.compress = Rope(c.rope_compress);

  groups_ = make_cache_groups(c, &layout_, static_cast<int32_t>(weights_->mtp_layers.size()));
}

std::vector<CacheGroupSpec> make_cache_groups(const DeepseekV4Config& c, CacheLayout* layout, int32_t mtp_layers) {
  std::vector<CacheGroupSpec> groups;
  int32_t n_csa = 0, n_hca = 0;
  layout->type_layer.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const AttnType t = c.layer_types[l];
    layout->type_layer[l] = t == AttnType::kCSA ? n_csa++ : t == AttnType::kHCA ? n_hca++ : -1;
  }
  const int64_t f = sizeof(float), hd = c.head_dim, ihd = c.index_head_dim;
  auto add = [&](CacheGroupSpec spec) {
    groups.push_back(std::move(spec));
    return static_cast<int32_t>(groups.size() - 1);
  };
  // Sliding K=V ring: every layer attends to its last sliding_window tokens (MTP layers too).
  layout->swa_kv =
      add({"swa_kv", CacheKind::kSlidingRing, c.num_hidden_layers + mtp_layers, hd * f, c.sliding_window, 1, 0});
  if (n_csa) {
    const int32_t m = c.compress_rate_csa;
    layout->csa_kv = add({"csa_kv", CacheKind::kCompressed, n_csa, hd * f, 0, m, 0});
    layout->csa_index_keys = add({"csa_index_keys", CacheKind::kCompressed, n_csa, ihd * f, 0, m, 0});
    // Raw (kv, gate) rows of the compressor (2 * head_dim each) and the indexer (2 * index_head_dim
    // each) for the last two windows: the open one and the previous one its entry overlaps.
    layout->csa_state = add({"csa_state", CacheKind::kSlidingRing, n_csa, (4 * hd + 4 * ihd) * f, 2 * m, 1, 0});
  }
  if (n_hca) {
    const int32_t m = c.compress_rate_hca;
    layout->hca_kv = add({"hca_kv", CacheKind::kCompressed, n_hca, hd * f, 0, m, 0});
    // Raw (kv, gate) rows of the open window.
    layout->hca_state = add({"hca_state", CacheKind::kSlidingRing, n_hca, 2 * hd * f, m, 1, 0});
  }
  return groups;
}

void DeepseekV4Model::run_layer(const LayerWeights& lw, int32_t layer, bool hash_routed, const Chunk& chunk,
                                const int32_t* route_tokens, float* streams) const {
  const DeepseekV4Config& c = config_;
  const int64_t L = chunk.num_tokens, H = c.hidden_size, hc = c.hc_mult;
  const float eps = static_cast<float>(c.rms_norm_eps);
  std::vector<float> collapsed(static_cast<size_t>(L * H)), out(static_cast<size_t>(L * H));
  std::vector<float> post(static_cast<size_t>(L * hc)), comb(static_cast<size_t>(L * hc * hc));
  hc_pre(c, lw.hc_attn, streams, L, collapsed.data(), post.data(), comb.data());
  kernels::cpu::rms_norm(collapsed.data(), lw.attn_norm, L, H, H, eps, collapsed.data());
  attention_forward(c, lw, layer, ropes_, layout_, collapsed.data(), chunk, out.data());
  hc_post(c, out.data(), post.data(), comb.data(), L, streams);

  hc_pre(c, lw.hc_ffn, streams, L, collapsed.data(), post.data(), comb.data());
  kernels::cpu::rms_norm(collapsed.data(), lw.ffn_norm, L, H, H, eps, collapsed.data());
  moe_forward(c, lw.ffn, hash_routed, route_tokens, collapsed.data(), L, out.data());
  hc_post(c, out.data(), post.data(), comb.data(), L, streams);
}

void DeepseekV4Model::forward_sequence(const Chunk& chunk, bool all_logits, float* logits,
                                       std::vector<float>* final_streams) const {
  const DeepseekV4Config& c = config_;
  const DeepseekV4Weights& w = *weights_;
  const int64_t L = chunk.num_tokens, H = c.hidden_size, hc = c.hc_mult;
  const float eps = static_cast<float>(c.rms_norm_eps);

  std::vector<float> streams(static_cast<size_t>(L * hc * H));
  for (int64_t i = 0; i < L; ++i)
    for (int64_t k = 0; k < hc; ++k)
      std::memcpy(streams.data() + (i * hc + k) * H, w.embed + static_cast<int64_t>(chunk.tokens[i]) * H,
                  static_cast<size_t>(H) * 4);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l)
    run_layer(w.layers[l], l, c.mlp_layer_types[l] == MlpType::kHashMoe, chunk, chunk.tokens, streams.data());
  const int64_t first = all_logits ? 0 : L - 1, rows = L - first;
  std::vector<float> y(static_cast<size_t>(rows * H));
  hc_head(c, w, streams.data() + first * hc * H, rows, y.data());
  kernels::cpu::rms_norm(y.data(), w.norm, rows, H, H, eps, y.data());
  kernels::cpu::linear(y.data(), rows, H, w.head, c.vocab_size, logits);
  if (final_streams) *final_streams = std::move(streams);
}

Status DeepseekV4Model::forward_chunk(const Chunk& chunk, float* logits, std::vector<float>* final_streams) const {
  if (chunk.num_tokens < 1 || !chunk.tokens || !chunk.cache) return Status::invalid_argument("forward_chunk: empty chunk");
  forward_sequence(chunk, true, logits, final_streams);
  return Status::ok();
}

Status DeepseekV4Model::mtp_forward(int32_t k, const Chunk& chunk, const float* streams, const int32_t* next,
                                    float* logits, std::vector<float>* out_streams, bool all_logits) const {
  const DeepseekV4Config& c = config_;
  const DeepseekV4Weights& w = *weights_;
  if (k < 0 || k >= static_cast<int32_t>(w.mtp_layers.size()))
    return Status::invalid_argument(w.mtp_unavailable.empty()
                                        ? "mtp_forward: the checkpoint has " + std::to_string(w.mtp_layers.size()) +
                                              " MTP layers, not " + std::to_string(k + 1)
                                        : "mtp_forward: MTP is unavailable: " + w.mtp_unavailable);
  const int64_t L = chunk.num_tokens, H = c.hidden_size, hc = c.hc_mult;
  for (int64_t i = 0; i < L; ++i)
    if (next[i] < 0 || next[i] >= c.vocab_size)
      return Status::invalid_argument("mtp_forward: next[" + std::to_string(i) + "] is outside the vocabulary");
  const float eps = static_cast<float>(c.rms_norm_eps);
  const MtpLayerWeights& m = w.mtp_layers[k];
  // x[i, s] = e_proj(enorm(embed(next[i]))) + h_proj(hnorm(streams[i, s])).
  std::vector<float> e(static_cast<size_t>(L * H)), ep(static_cast<size_t>(L * H));
  for (int64_t i = 0; i < L; ++i)
    std::memcpy(e.data() + i * H, w.embed + static_cast<int64_t>(next[i]) * H, static_cast<size_t>(H) * 4);
  kernels::cpu::rms_norm(e.data(), m.enorm, L, H, H, eps, e.data());
  kernels::cpu::linear(e.data(), L, m.e_proj, ep.data());
  std::vector<float> hs(static_cast<size_t>(L * hc * H)), x(static_cast<size_t>(L * hc * H));
  kernels::cpu::rms_norm(streams, m.hnorm, L * hc, H, H, eps, hs.data());
  kernels::cpu::linear(hs.data(), L * hc, m.h_proj, x.data());
  for (int64_t i = 0; i < L; ++i)
    for (int64_t s = 0; s < hc; ++s)
      for (int64_t d = 0; d < H; ++d) x[(i * hc + s) * H + d] += ep[i * H + d];
  run_layer(m.block, c.num_hidden_layers + k, false, chunk, next, x.data());
  const int64_t first = all_logits ? 0 : L - 1, rows = L - first;
  std::vector<float> y(static_cast<size_t>(rows * H));
  hc_head(c, m.hc_head_fn, m.hc_head_base, m.hc_head_scale, x.data() + first * hc * H, rows, y.data());
  kernels::cpu::rms_norm(y.data(), m.norm, rows, H, H, eps, y.data());
  kernels::cpu::linear(y.data(), rows, H, w.head, c.vocab_size, logits);
  if (out_streams) *out_streams = std::move(x);
  return Status::ok();
}

Status DeepseekV4Model::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  hidden_.assign(batch.seqs.size(), {});
  size_t i = 0;
  // No position cap (0), as the CUDA model: V4's two paths agree on what they accept.
  return forward_each_sequence(batch, config_.vocab_size, 0, logits, [&](const SequenceInput& s, float* out) {
    forward_sequence({s.tokens, s.num_tokens, s.start_pos, s.cache}, s.all_logits, out,
                     s.keep_hidden ? &hidden_[i] : nullptr);
    ++i;
  });
}

Status DeepseekV4Model::drafts_supported() const {
  if (!weights_->mtp_layers.empty()) return Status::ok();
  return Status::unsupported("deepseek_v4: speculative decoding needs the checkpoint's MTP layers: " +
                             (weights_->mtp_unavailable.empty() ? std::string("it has none (num_nextn_predict_layers 0)")
                                                                : weights_->mtp_unavailable));
}

Status DeepseekV4Model::propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) {
  DI_RETURN_IF_ERROR(drafts_supported());
  const DeepseekV4Config& c = config_;
  const int64_t H = c.hidden_size, hc = c.hc_mult, V = c.vocab_size, W = c.sliding_window;
  const int32_t mtp_layer = c.num_hidden_layers;  // the swa_kv rows of MTP layer 0
  std::vector<float> logits, streams, saved;
  for (size_t s = 0; s < inputs.size(); ++s) {
    const DraftInput& in = inputs[s];
    if (in.batch_index < 0 || static_cast<size_t>(in.batch_index) >= hidden_.size() || !in.cache)
      return Status::invalid_argument("propose_drafts: input " + std::to_string(s) + " names no kept forward row");
    const std::vector<float>& hidden = hidden_[in.batch_index];
    if (in.num_positions < 1 || static_cast<int64_t>(hidden.size()) < in.num_positions * hc * H || !in.next_tokens)
      return Status::invalid_argument("propose_drafts: input " + std::to_string(s) +
                                      " has more positions than its forward kept");
    const Chunk known{in.next_tokens, in.num_positions, in.start_pos, in.cache};
    logits.resize(static_cast<size_t>(V));
    DI_RETURN_IF_ERROR(mtp_forward(0, known, hidden.data(), in.next_tokens, logits.data(),
                                   in.max_drafts > 0 ? &streams : nullptr, false));
    if (in.max_drafts < 1) continue;
    int32_t token = chooser.choose(s, 0, logits);
    // Draft steps write the MTP layer's ring at positions past the known ones: save those rows
    // and put them back, so the cache is what a run without drafts leaves.
    const int64_t first = in.start_pos + in.num_positions;
    const int32_t steps = static_cast<int32_t>(std::min<int64_t>(in.max_drafts, W)) - 1;
    saved.resize(static_cast<size_t>(std::max(steps, 0)) * c.head_dim);
    int32_t taken = 0;
    for (int32_t j = 1; j <= steps && token >= 0; ++j) {
      const int64_t pos = first + j - 1;
      std::memcpy(saved.data() + (j - 1) * c.head_dim, cache_row(known, layout_.swa_kv, mtp_layer, pos % W),
                  static_cast<size_t>(c.head_dim) * 4);
      ++taken;
      const std::vector<float> last(streams.end() - hc * H, streams.end());
      const Chunk step{&token, 1, pos, in.cache};
      DI_RETURN_IF_ERROR(mtp_forward(0, step, last.data(), &token, logits.data(), &streams, false));
      token = chooser.choose(s, j, logits);
    }
    for (int32_t j = taken; j >= 1; --j)
      std::memcpy(cache_row(known, layout_.swa_kv, mtp_layer, (first + j - 1) % W),
                  saved.data() + (j - 1) * c.head_dim, static_cast<size_t>(c.head_dim) * 4);
  }
  return Status::ok();
}

Result<std::unique_ptr<Model>> create_model(const std::string& model_dir,
                                            const nlohmann::json& json,
                                            const ModelOptions& options) {
  DI_ASSIGN_OR_RETURN(DeepseekV4Config config, parse_config(json));
  DI_ASSIGN_OR_RETURN(auto weights, load_weights(model_dir, config, options.device == "cuda"));
#ifdef DI_WITH_CUDA
  if (options.device == "cuda") return V4CudaModel::load(model_dir, std::move(config), std::move(weights), options);
#endif
  if (options.num_threads > 0) kernels::cpu::set_num_threads(options.num_threads);
  return std::unique_ptr<Model>(new DeepseekV4Model(std::move(config), std::move(weights), model_dir));
}

}  // namespace di::engine::deepseek_v4
