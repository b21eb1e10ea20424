// MlaWeights: every tensor of a deepseek_v2 / deepseek_v3 checkpoint, by the
// checkpoints' names (model.layers.N.self_attn.kv_a_proj_with_mqa.weight, mlp.experts.E.gate_proj
// .weight, mlp.gate.e_score_correction_bias, ...; transformers' fused mlp.experts.gate_up_proj is
// read too), plus the per-head key up-projection transposed once for the absorbed decode path.
// Small tensors are fp32 pointers; projections are LinearWeights, fp32 or DeepSeek-V3/R1's fp8
// e4m3 with fp32 weight_scale_inv per 128 x 128 block, read in place. Loading only, no math.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/weight_loader.h"
#include "kernels/weight_format.h"

namespace di::engine::deepseek_v2 {

// A SwiGLU MLP: gate and up [inter, hidden], down [hidden, inter]; biases null when absent.
struct MlpWeights {
  kernels::LinearWeight gate;
  kernels::LinearWeight up;
  kernels::LinearWeight down;
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  const float* down_bias = nullptr;
  int32_t intermediate = 0;
};

struct MlaAttentionWeights {
  kernels::LinearWeight q_proj;          // no q_lora: [heads * qk_head_dim, hidden]
  kernels::LinearWeight q_a_proj;        // q_lora: [q_lora_rank, hidden]
  const float* q_a_bias = nullptr;
  const float* q_a_layernorm = nullptr;  // [q_lora_rank]
  kernels::LinearWeight q_b_proj;        // [heads * qk_head_dim, q_lora_rank]
  kernels::LinearWeight kv_a_proj;       // [kv_lora_rank + qk_rope_head_dim, hidden]
  const float* kv_a_bias = nullptr;
  const float* kv_a_layernorm = nullptr;  // [kv_lora_rank]
  // [heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank], fp32 even from an fp8 checkpoint:
  // both attention paths slice it per head and the absorbed one transposes it (vLLM dequantizes
  // it at load for the same reason); it is small next to the rest of a layer.
  const float* kv_b_proj = nullptr;
  kernels::LinearWeight o_proj;      // [hidden, heads * v_head_dim]
  const float* o_bias = nullptr;
  // kv_b_proj's key rows of each head, transposed: [heads, kv_lora_rank, qk_nope_head_dim], so
  // q_nope can be folded into latent space (the absorbed path) with one linear per head.
  const float* w_uk_t = nullptr;
};

struct MoeWeights {
  const float* gate = nullptr;  // router [experts, hidden]
  const float* e_score_correction_bias = nullptr;  // deepseek_v3 [experts]
  std::vector<MlpWeights> experts;
  MlpWeights shared;  // intermediate 0 when n_shared_experts is 0
};

struct MlaLayerWeights {
  const float* input_layernorm = nullptr;
  const float* post_attention_layernorm = nullptr;
  MlaAttentionWeights attn;
  bool is_moe = false;
  MlpWeights mlp;  // dense layers
  MoeWeights moe;  // MoE layers
};

// One multi-token-prediction layer of DeepSeek-V3 (model.layers.<num_hidden_layers + k>.*, the
// V3 report's MTP module): enorm / hnorm, eh_proj over [enorm(embed(next token)) | hnorm(hidden)],
// a full decoder block (MLA + MoE or dense by its layer index) and shared_head (norm, head).
// Its embed_tokens and shared_head.head are the main model's (the checkpoint may store copies).
struct MlaMtpLayerWeights {
  const float* embed = nullptr;  // [vocab, hidden]
  const float* enorm = nullptr;
  const float* hnorm = nullptr;
  kernels::LinearWeight eh_proj;  // [hidden, 2 * hidden]
  MlaLayerWeights block;
  const float* head_norm = nullptr;  // shared_head.norm
  const float* head = nullptr;       // [vocab, hidden]
};

struct MlaWeights {
  WeightStore store;
  const float* embed = nullptr;
  const float* lm_head = nullptr;
  const float* norm = nullptr;
  std::vector<MlaLayerWeights> layers;
  // Every tensor of the MTP layers past the decoder (model.layers.<num_hidden_layers + i>.*) as
  // stored, taken even when the config declares none (transformers ignores them too).
  std::vector<const TensorView*> mtp;
  // The first num_nextn_predict_layers of them ready to run; empty with mtp_unavailable saying
  // why when the config declares none or their tensors do not form whole layers (the model still
  // loads; only speculative decoding is unavailable).
  std::vector<MlaMtpLayerWeights> mtp_layers;
  std::string mtp_unavailable;
};

// `for_device`: projections stored as BF16 come as they are stored (WeightFormat::kBf16, read in
// place from the mapping) instead of as fp32 copies, for a device upload.
Result<std::unique_ptr<MlaWeights>> load_mla_weights(const std::string& model_dir, const MlaConfig& config,
                                                     bool for_device = false);

}  // namespace di::engine::deepseek_v2
