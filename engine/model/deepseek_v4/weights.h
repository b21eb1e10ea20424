// DeepseekV4Weights: every tensor of a deepseek_v4 checkpoint, found by the
// checkpoint's own names (DeepSeek's: layers.N.attn.wq_a.weight, ffn.experts.E.w1.weight,
// hc_attn_fn, ...; with transformers' save_pretrained they carry a "model." prefix and a few
// globals keep transformers' names, e.g. model.embed_tokens.weight). Small tensors are fp32
// pointers; the projections are LinearWeights, fp32 or as DeepSeek ships them (fp8 e4m3 with
// `.scale` 128 x 128 ue8m0 blocks; routed experts packed fp4 with per-32 scales), read in place.
// Loading only, no math.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/deepseek_v4/config.h"
#include "engine/model/weight_loader.h"
#include "kernels/weight_format.h"

namespace di::engine::deepseek_v4 {

// mHC mapping of one site: fn [(2 + hc) * hc, hc * hidden], base [(2 + hc) * hc], scale [3].
struct HcWeights {
  const float* fn = nullptr;
  const float* base = nullptr;
  const float* scale = nullptr;
};

// A compressor at `dim` channels per entry. With overlap (CSA and its indexer) wkv and wgate
// project to 2 * dim (the two series Ca | Cb) and ape is [rate, 2 * dim]; without (HCA) dim.
struct CompressorWeights {
  const float* wkv = nullptr;
  const float* wgate = nullptr;
  const float* ape = nullptr;   // learned position bias added to the gate logits
  const float* norm = nullptr;  // [dim]
  int32_t dim = 0;
  int32_t rate = 0;
  bool overlap = false;
};

struct AttentionWeights {
  kernels::LinearWeight wq_a;  // [q_lora_rank, hidden]
  const float* q_norm = nullptr;   // [q_lora_rank]
  kernels::LinearWeight wq_b;  // [heads * head_dim, q_lora_rank]
  kernels::LinearWeight wkv;  // [head_dim, hidden]
  const float* kv_norm = nullptr;  // [head_dim]
  kernels::LinearWeight wo_a;  // [o_groups * o_lora_rank, heads * head_dim / o_groups]
  kernels::LinearWeight wo_b;  // [hidden, o_groups * o_lora_rank]
  const float* sinks = nullptr;    // [heads]
  CompressorWeights compressor;    // CSA / HCA layers
  CompressorWeights indexer;       // CSA layers: the indexer's own compressor
  kernels::LinearWeight index_wq_b;           // [index_heads * index_head_dim, q_lora_rank]
  const float* index_weights_proj = nullptr;  // [index_heads, hidden]
};

struct ExpertWeights {
  kernels::LinearWeight w1;  // gate [inter, hidden]
  kernels::LinearWeight w2;  // down [hidden, inter]
  kernels::LinearWeight w3;  // up [inter, hidden]
};

struct MoeWeights {
  const float* gate = nullptr;     // router [experts, hidden]
  const float* bias = nullptr;     // top-k layers: the score correction bias [experts]
  const int32_t* tid2eid = nullptr;  // hash layers: [vocab, experts_per_tok]
  std::vector<ExpertWeights> experts;
  ExpertWeights shared;
};

struct LayerWeights {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  HcWeights hc_attn;
  HcWeights hc_ffn;
  AttentionWeights attn;
  MoeWeights ffn;
};

// One multi-token-prediction layer (DeepSeek's mtp.<k>.*): a sliding-attention, top-k MoE
// decoder block over the projected, normed next-token embedding and main-model state, with its
// own mHC head and final norm; embedding and lm_head are the main model's.
struct MtpLayerWeights {
  LayerWeights block;
  kernels::LinearWeight e_proj;  // [hidden, hidden], over enorm(embed(next token))
  kernels::LinearWeight h_proj;  // [hidden, hidden], over hnorm(each main stream)
  const float* enorm = nullptr;
  const float* hnorm = nullptr;
  const float* norm = nullptr;
  const float* hc_head_fn = nullptr;     // [hc, hc * hidden]
  const float* hc_head_base = nullptr;   // [hc]
  const float* hc_head_scale = nullptr;  // [1]
};

struct DeepseekV4Weights {
  WeightStore store;
  const float* embed = nullptr;  // [vocab, hidden]
  const float* head = nullptr;   // [vocab, hidden]
  // A device load of a BF16 checkpoint keeps these two as stored (the matching pointer above is
  // then null): gigabytes that need no fp32 host copy on their way up.
  kernels::LinearWeight embed_stored, head_stored;
  const float* norm = nullptr;   // [hidden]
  const float* hc_head_fn = nullptr;     // [hc, hc * hidden]
  const float* hc_head_base = nullptr;   // [hc]
  const float* hc_head_scale = nullptr;  // [1]
  std::vector<LayerWeights> layers;
  // Multi-token-prediction layers, kept as loaded for speculative decoding. Real checkpoints
  // name them mtp.<i>.* (i < num_nextn_predict_layers): a decoder layer's attn.* / ffn.* /
  // hc_attn_* / hc_ffn_* tensors plus the MTP block's own e_proj, h_proj, enorm, hnorm, norm and
  // hc_head_* tensors; transformers drops them on load, so save_pretrained never writes them.
  std::vector<const TensorView*> mtp;
  // The same layers ready to run; empty with mtp_unavailable saying why when the mtp.<k>.*
  // tensors do not form whole layers.
  std::vector<MtpLayerWeights> mtp_layers;
  std::string mtp_unavailable;
};

// Maps model_dir's safetensors and takes every tensor `config` implies; any missing, extra,
// mis-shaped or wrongly typed tensor is an error naming it. `for_device`: BF16 linear weights stay
// as stored (WeightFormat::kBf16) for a device upload instead of becoming fp32 host copies.
Result<std::unique_ptr<DeepseekV4Weights>> load_weights(const std::string& model_dir,
                                                         const DeepseekV4Config& config, bool for_device = false);

}  // namespace di::engine::deepseek_v4
