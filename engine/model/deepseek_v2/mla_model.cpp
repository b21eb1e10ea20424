// MlaModel: cache group, the layer loop (MLA, then dense MLP or MoE), final head. See
// mla_model.h.
#include "engine/model/deepseek_v2/mla_model.h"

#include "engine/model/batch_check.h"
#include "engine/model/prenorm_decoder.h"
#include "engine/model/deepseek_v2/moe.h"
#ifdef DI_WITH_CUDA
#include "engine/model/deepseek_v2/mla_cuda_model.h"
#endif
#include "kernels/cpu/threads.h"

namespace di::engine::deepseek_v2 {
namespace cpu = di::kernels::cpu;

namespace {
constexpr int32_t kLatentGroup = 0;
}

MlaModel::MlaModel(MlaConfig config, std::unique_ptr<MlaWeights> weights, std::string model_dir)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      rope_(config_.rope, config_.rope_interleave ? RopeLayout::kInterleaved : RopeLayout::kHalf) {
  const MlaConfig& c = config_;
  info_ = model_info_from(c.model_type, std::move(model_dir), c);
  // One latent entry per token per layer: kv_a_layernorm(c_kv) | rope(k_pe). The MTP layers
  // attend over every position too: their rows follow the decoder's.
  groups_.push_back({"mla_latent", CacheKind::kFull, c.num_hidden_layers + num_mtp_layers(),
                     static_cast<int64_t>((int64_t{c.kv_lora_rank} + c.qk_rope_head_dim) * sizeof(float)), 0, 1, 0});
}

void MlaModel::forward_sequence(const SequenceInput& seq, float* logits, std::vector<float>* final_hidden) const {
  const MlaConfig& c = config_;
  const MlaWeights& w = *weights_;
  const int64_t L = seq.num_tokens, H = c.hidden_size;
  const PrenormDecoder d{H, c.num_hidden_layers, c.vocab_size, static_cast<float>(c.rms_norm_eps),
                         w.embed, w.norm, w.lm_head};
  prenorm_decoder_forward(
      d, seq, logits,
      [&](int32_t l) { return std::make_pair(w.layers[l].input_layernorm, w.layers[l].post_attention_layernorm); },
      [&](int32_t l, const float* h, float* out) {
        mla_attention(c, w.layers[l].attn, rope_, l, kLatentGroup, seq, path_, h, out);
      },
      [&](int32_t l, const float* h, float* out) {
        const MlaLayerWeights& lw = w.layers[l];
        if (lw.is_moe) {
          moe_forward(c, lw.moe, h, L, out);
        } else {
          mlp_forward(lw.mlp, H, h, L, out);
        }
      },
      final_hidden);
}

Status MlaModel::forward_hidden(const SequenceInput& seq, float* logits, std::vector<float>* final_hidden) const {
  if (seq.num_tokens < 1 || !seq.tokens || !seq.cache) return Status::invalid_argument("forward_hidden: empty sequence");
  forward_sequence(seq, logits, final_hidden);
  return Status::ok();
}

Status MlaModel::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  hidden_.assign(batch.seqs.size(), {});
  size_t i = 0;
  return forward_each_sequence(batch, config_.vocab_size, config_.max_position_embeddings, logits,
                               [&](const SequenceInput& s, float* rows) {
                                 forward_sequence(s, rows, s.keep_hidden ? &hidden_[i] : nullptr);
                                 ++i;
                               });
}

Result<std::unique_ptr<Model>> create_mla_model(const std::string& model_dir, const nlohmann::json& json,
                                                const ModelOptions& options) {
  DI_ASSIGN_OR_RETURN(MlaConfig config, parse_mla_config(json));
  DI_ASSIGN_OR_RETURN(auto weights, load_mla_weights(model_dir, config));
#ifdef DI_WITH_CUDA
  if (options.device == "cuda") return MlaCudaModel::load(model_dir, std::move(config), std::move(weights), options);
#endif
  if (options.num_threads > 0) cpu::set_num_threads(options.num_threads);
  return std::unique_ptr<Model>(new MlaModel(std::move(config), std::move(weights), model_dir));
}

}  // namespace di::engine::deepseek_v2
