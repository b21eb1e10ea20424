// MlaCudaModel: deepseek_v2 / deepseek_v3 on one CUDA GPU, op for op the CPU MlaModel (the
// reference it must match): large matrices in the checkpoint's dtype (fp32 or bf16, fp32
// accumulation; bf16 GEMM operands staged once per norm; DeepSeek-V3/R1's fp8 projections and
// experts as shipped, with their 128 x 128 block scales), activations, norms and the latent
// cache in fp32. Attention always takes the weight-absorbed form: MQA in latent space with one
// K=V head of kv_lora_rank + rope channels. Every op runs once for all rows of a step (prefill
// chunks and decode tokens of many sequences, through a TokenBatch), all heads in one launch;
// experts are routed and grouped on the device, so decode steps replay as CUDA graphs (padded
// batch buckets). Steps of many (row, expert) pairs, and experts with biases, group on the host
// instead (one sync per MoE layer, one cuBLAS GEMM per expert). CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/cuda/device_linear.h"
#include "engine/model/cuda/device_model.h"
#include "engine/model/cuda/device_weights.h"
#include "engine/model/cuda/expert_id_check.h"
#include "engine/model/cuda/expert_rows.h"
#include "engine/model/cuda/graph_cache.h"
#include "engine/model/cuda/step_batch.h"
#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_weights.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::deepseek_v2 {

// A SwiGLU MLP on the device: gate|up fused [2 inter, hidden], down [hidden, inter] in the model
// dtype or fp8; fp32 biases, null when absent.
struct MlaCudaMlp {
  cuda::DeviceLinear gate_up;
  cuda::DeviceLinear down;
  const float* gate_up_bias = nullptr;
  const float* down_bias = nullptr;
  int64_t inter = 0;
};

struct MlaCudaLayer {
  const float* input_norm = nullptr;
  const float* post_norm = nullptr;
  cuda::DeviceLinear q_proj;  // no q_lora
  cuda::DeviceLinear q_a_proj;
  const float* q_a_bias = nullptr;
  const float* q_a_norm = nullptr;
  cuda::DeviceLinear q_b_proj;
  cuda::DeviceLinear kv_a_proj;
  const float* kv_a_bias = nullptr;
  const float* kv_a_norm = nullptr;
  const void* kv_b_proj = nullptr;  // [heads * (nope + v), kv_lora_rank], model dtype (dequantized at load)
  const void* w_uk_t = nullptr;     // [heads, kv_lora_rank, nope]
  cuda::DeviceLinear o_proj;
  const float* o_bias = nullptr;
  bool is_moe = false;
  MlaCudaMlp mlp;     // dense layers
  const void* router = nullptr;
  const float* correction_bias = nullptr;
  std::vector<MlaCudaMlp> experts;
  MlaCudaMlp shared;  // inter 0: none
  // Device arrays [experts] of the experts' gate_up / down codes or values, and (fp8) their scales.
  const void* const* gate_up_table = nullptr;
  const void* const* down_table = nullptr;
  const float* const* gate_up_scale_table = nullptr;
  const float* const* down_scale_table = nullptr;
};

class MlaCudaModel final : public cuda::DeviceModel {
 public:
  // Uploads `host` (as load_mla_weights returned it) in the checkpoint's dtype, then drops it.
  static Result<std::unique_ptr<Model>> load(const std::string& model_dir, MlaConfig config,
                                             std::unique_ptr<MlaWeights> host, const ModelOptions& options);
  // A model of `config`'s shape with random weights drawn on the device from `seed` (benchmarks:
  // no checkpoint, no host copies); `fp8_weights`: DeepSeek-V3's fp8 layout (random_linear).
  static Result<std::unique_ptr<MlaCudaModel>> random(MlaConfig config, kernels::cuda::DType dtype, uint64_t seed,
                                                      const ModelOptions& options, bool fp8_weights = false);
  ~MlaCudaModel() override;

  Result<float*> enqueue_forward(const ForwardBatch& batch, int64_t* rows) override;
  Status check_forward() override;
  int64_t weight_bytes() const { return weights_.bytes(); }
  const MlaConfig& config() const { return config_; }

 private:
  MlaCudaModel(MlaConfig config, kernels::cuda::DType dtype, const ModelOptions& options, std::string model_dir);
  static Status check_shape(const MlaConfig& c);
  Status init_device();
  Status upload(const MlaWeights& host);
  Status randomize(uint64_t seed, bool fp8_weights);
  Status put_mlp(const MlpWeights& h, MlaCudaMlp& d, const std::string& name);
  // One projection up in its stored format; records the largest fp8 one for the dequant stage.
  Status put_linear(std::initializer_list<const kernels::LinearWeight*> parts, const std::string& name,
                    cuda::DeviceLinear& d);
  Status build_expert_tables();
  // Workspaces for `rows` rows, contexts up to `max_end` tokens and `logit_rows` logits rows;
  // sets *moved when they had to be reallocated.
  Status reserve(int64_t rows, int64_t max_end, int64_t logit_rows, bool* moved);
  // The whole forward over the uploaded StepBatch, into logits_dev_ (capturable when `grouped_moe`).
  Status run_step(bool grouped_moe);
  Status rope(float* x, int64_t row_stride, int64_t count, int64_t width);
  Status attention(int32_t layer);
  Status mlp(const MlaCudaMlp& m, const float* x, const void* x16, int64_t rows, float* y);
  // The rest of mlp() once a_.gu holds the gate|up projection.
  Status mlp_down(const MlaCudaMlp& m, int64_t rows, float* y);
  Status moe(int32_t layer, bool grouped);
  Status moe_routed_grouped(const MlaCudaLayer& w);
  Status moe_routed_by_expert(const MlaCudaLayer& w);

  MlaConfig config_;
  RotaryEmbedding rope_;
  bool enforce_eager_ = false;
  bool experts_biased_ = false;  // routed experts with biases: grouped on the host
  bool latent_bf16_ = false;     // the latent cache holds bf16 entries (set from the dtype and widths)
  bool experts_fp8_ = false;     // routed experts in fp8 (DeepSeek-V3/R1 as shipped)
  int64_t largest_fp8_ = 0;      // elements of the largest fp8 projection (its dequant stage)

  cuda::DeviceWeights weights_;
  const float* embed_ = nullptr;  // fp32: rows are gathered into fp32 activations
  const void* head_ = nullptr;
  const float* norm_ = nullptr;
  std::vector<MlaCudaLayer> layers_;
  kernels::cuda::DeviceBuffer inv_freq_, expert_tables_;

  cuda::StepBatch step_;
  int64_t rows_ = 0, max_end_ = 0, logit_rows_ = 0;  // what the workspaces are carved for
  int64_t grouped_pairs_ = 0;
  int32_t splits_ = 1;
  kernels::cuda::DeviceBuffer act_, logits_dev_;
  cuda::ExpertIdCheck bad_id_;
  cuda::ExpertRows expert_rows_;
  struct Act {
    float *x, *h, *out, *qa, *q, *ckv, *qlat, *olat, *attn, *partial, *rlogits, *ew, *gx, *gu, *act, *y;
    float *erow_weights, *pair_act, *pair_y, *head_x;
    float *h16, *qa16;  // h and qa rounded to bf16: the GEMM operand, staged once
    float *gx16, *act16;  // bf16 storage: routed pairs' rows and a run's activation (bf16 models)
    float *mlp16, *attn16;  // bf16 storage: a dense / shared MLP's activation, the heads' outputs
    int32_t *eids, *erows, *offsets, *slot_pair;
  } a_{};
  cuda::GraphCache graphs_;  // decode steps by (rows, context bucket)
};

}  // namespace di::engine::deepseek_v2

#endif  // DI_WITH_CUDA
