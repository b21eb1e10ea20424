// MlaCudaModel: deepseek_v2 / deepseek_v3 on one CUDA GPU, op for op the CPU MlaModel (the
// reference it must match): large matrices in the checkpoint's dtype (fp32 or bf16, fp32
// accumulation), activations, norms and the latent cache in fp32. Attention always takes the
// weight-absorbed form: MQA in latent space with one K=V head of kv_lora_rank + rope channels.
// CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <memory>
#include <string>
#include <vector>

#include "engine/model/cuda/device_model.h"
#include "engine/model/cuda/device_weights.h"
#include "engine/model/cuda/expert_rows.h"
#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_weights.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::deepseek_v2 {

// A SwiGLU MLP on the device: gate|up fused [2 inter, hidden], down [hidden, inter] in the model
// dtype; fp32 biases, null when absent.
struct MlaCudaMlp {
  const void* gate_up = nullptr;
  const void* down = nullptr;
  const float* gate_up_bias = nullptr;
  const float* down_bias = nullptr;
  int64_t inter = 0;
};

struct MlaCudaLayer {
  const float* input_norm = nullptr;
  const float* post_norm = nullptr;
  const void* q_proj = nullptr;  // no q_lora
  const void* q_a_proj = nullptr;
  const float* q_a_bias = nullptr;
  const float* q_a_norm = nullptr;
  const void* q_b_proj = nullptr;
  const void* kv_a_proj = nullptr;
  const float* kv_a_bias = nullptr;
  const float* kv_a_norm = nullptr;
  const void* kv_b_proj = nullptr;  // [heads * (nope + v), kv_lora_rank]
  const void* w_uk_t = nullptr;     // [heads, kv_lora_rank, nope]
  const void* o_proj = nullptr;
  const float* o_bias = nullptr;
  bool is_moe = false;
  MlaCudaMlp mlp;     // dense layers
  const void* router = nullptr;
  const float* correction_bias = nullptr;
  std::vector<MlaCudaMlp> experts;
  MlaCudaMlp shared;  // inter 0: none
};

class MlaCudaModel final : public cuda::DeviceModel {
 public:
  // Uploads `host` (as load_mla_weights returned it) in the checkpoint's dtype, then drops it.
  static Result<std::unique_ptr<Model>> load(const std::string& model_dir, MlaConfig config,
                                             std::unique_ptr<MlaWeights> host, const ModelOptions& options);

  Result<float*> enqueue_forward(const ForwardBatch& batch, int64_t* rows) override;

 private:
  using Seq = cuda::DeviceSeq;  // views[0]: the latent cache

  MlaCudaModel(MlaConfig config, kernels::cuda::DType dtype, const ModelOptions& options, std::string model_dir);
  Status init_device();
  Status upload(const MlaWeights& host);
  Status put_mlp(const MlpWeights& h, MlaCudaMlp& d);
  Status reserve(const ForwardBatch& batch);
  Status run_sequence(const Seq& seq, float* logits);
  Status rope(float* x, int64_t L, int64_t row_stride, int64_t count, int64_t width, int64_t start_pos);
  Status attention(const Seq& seq, int32_t layer);
  Status mlp(const MlaCudaMlp& m, const float* x, int64_t rows, float* y);
  Status moe(const Seq& seq, int32_t layer);

  MlaConfig config_;
  RotaryEmbedding rope_;

  cuda::DeviceWeights weights_;
  const void* embed_ = nullptr;
  const void* head_ = nullptr;
  const float* norm_ = nullptr;
  std::vector<MlaCudaLayer> layers_;
  kernels::cuda::DeviceBuffer inv_freq_;

  kernels::cuda::DeviceBuffer act_, positions_;
  cuda::ExpertRows expert_rows_;
  struct Act {
    float *x, *h, *out, *qa, *q, *ckv, *qlat, *olat, *attn, *att_scratch, *rlogits, *ew, *gx, *gu, *act, *y;
    int32_t *eids, *erows;
    float* erow_weights;
  } a_{};
  int64_t max_keys_ = 0;
};

}  // namespace di::engine::deepseek_v2

#endif  // DI_WITH_CUDA
