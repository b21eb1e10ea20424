// V4CudaModel: the deepseek_v4 family on one CUDA GPU, op for op the CPU DeepseekV4Model (the
// reference it must match): the large matrices in the checkpoint's dtype (fp32 or bf16, fp32
// accumulation), activations, mHC streams, norms and caches in fp32. Sequences run one after
// another through the same cache groups as the CPU model, in device memory. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <memory>
#include <string>
#include <vector>

#include "engine/model/cuda/device_model.h"
#include "engine/model/cuda/device_weights.h"
#include "engine/model/cuda/expert_rows.h"
#include "engine/model/deepseek_v4/attention.h"
#include "engine/model/deepseek_v4/chunk.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {

// Device copies of one layer's tensors. `void*` ones are in the model dtype; `float*` ones fp32.
struct V4CudaCompressor {
  const void* wkv = nullptr;
  const void* wgate = nullptr;
  const float* ape = nullptr;
  const float* norm = nullptr;
  int32_t dim = 0;
  int32_t rate = 0;
  bool overlap = false;
};

struct V4CudaExpert {
  const void* w13 = nullptr;  // [2 inter, hidden]: w1 (gate) then w3 (up)
  const void* w2 = nullptr;   // [hidden, inter]
};

struct V4CudaHc {
  const float* fn = nullptr;
  const float* base = nullptr;
  const float* scale = nullptr;
};

struct V4CudaLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  V4CudaHc hc_attn, hc_ffn;
  const void* wq_a = nullptr;
  const float* q_norm = nullptr;
  const void* wq_b = nullptr;
  const void* wkv = nullptr;
  const float* kv_norm = nullptr;
  const void* wo_a = nullptr;
  const void* wo_b = nullptr;
  const float* sinks = nullptr;
  V4CudaCompressor compressor, indexer;
  const void* index_wq_b = nullptr;
  const void* index_weights_proj = nullptr;
  const void* gate = nullptr;
  const float* gate_bias = nullptr;   // score-top-k layers
  const int32_t* tid2eid = nullptr;  // hash layers
  std::vector<V4CudaExpert> experts;
  V4CudaExpert shared;
};

class V4CudaModel final : public cuda::DeviceModel {
 public:
  // Uploads `host` (as load_weights returned it) in the checkpoint's dtype, then drops it.
  static Result<std::unique_ptr<Model>> load(const std::string& model_dir, DeepseekV4Config config,
                                             std::unique_ptr<DeepseekV4Weights> host, const ModelOptions& options);

  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override;

 private:
  using Seq = cuda::DeviceSeq;  // views by cache group (layout_)

  V4CudaModel(DeepseekV4Config config, kernels::cuda::DType dtype, const ModelOptions& options, std::string model_dir);
  Status init_device();
  Status upload(const DeepseekV4Weights& host);
  Status reserve(const ForwardBatch& batch);
  Status run_sequence(const Seq& seq, float* logits);
  Status hc_pre(const V4CudaHc& hc, int64_t L);
  Status attention(const Seq& seq, int32_t layer);
  Status compress(const Seq& seq, const V4CudaCompressor& cw, int32_t entry_group, int32_t type_layer,
                  int32_t state_group, int64_t state_offset_floats);
  Status indexer(const Seq& seq, const V4CudaLayer& w, int32_t type_layer);
  Status moe(const Seq& seq, int32_t layer);

  DeepseekV4Config config_;
  CacheLayout layout_;
  Ropes ropes_;

  cuda::DeviceWeights weights_;
  const void* embed_ = nullptr;
  const void* head_ = nullptr;
  const float* norm_ = nullptr;
  V4CudaHc hc_head_;
  std::vector<V4CudaLayer> layers_;
  kernels::cuda::DeviceBuffer inv_freq_main_, inv_freq_compress_;

  // Per-forward metadata and activations (sized for the batch's longest chunk and context).
  kernels::cuda::DeviceBuffer act_;
  cuda::ExpertRows expert_rows_;
  struct Act {
    float *streams, *nstreams, *mixes, *post, *comb, *x, *out, *qr, *q, *kv, *attn, *grouped;
    float *ckv, *cgate, *entries, *iq, *iw, *scores, *att_scratch, *rlogits, *ew, *gx, *gu, *act, *y;
    int32_t *selected, *count, *eids, *erows;
    float* erow_weights;
  } a_{};
  int64_t max_keys_ = 0, max_visible_ = 0;
};

}  // namespace di::engine::deepseek_v4

#endif  // DI_WITH_CUDA
