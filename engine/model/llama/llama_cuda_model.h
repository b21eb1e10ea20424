// LlamaCudaModel: the dense GQA decoder (llama, qwen2, qwen3) on one CUDA GPU. Weights and
// activations in the checkpoint's dtype (fp32 for fp32 checkpoints, else bf16) with fp32
// accumulation; K/V in the engine's paged cache in device memory. The CPU LlamaModel is the
// reference this must match; compiled only with CUDA.
#pragma once

#ifdef DI_WITH_CUDA

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>
#include <string>
#include <vector>

#include "engine/model/cuda/device_model.h"
#include "engine/model/cuda/graph_cache.h"
#include "engine/model/llama/llama_config.h"
#include "engine/model/rotary_embedding.h"
#include "kernels/cuda/device_buffer.h"

namespace di::engine::llama {

struct LlamaCudaLayer {
  const void* input_layernorm = nullptr;
  const void* post_attention_layernorm = nullptr;
  const void* qkv = nullptr;       // [q + 2 kv, hidden]: q_proj, k_proj, v_proj stacked
  const void* qkv_bias = nullptr;  // [q + 2 kv] or null
  const void* o_proj = nullptr;
  const void* o_bias = nullptr;
  const void* q_norm = nullptr;
  const void* k_norm = nullptr;
  const void* gate_up = nullptr;       // [2 inter, hidden]: gate_proj then up_proj
  const void* gate_up_bias = nullptr;
  const void* down_proj = nullptr;
  const void* down_bias = nullptr;
};

class LlamaCudaModel final : public cuda::DeviceModel {
 public:
  // From a checkpoint directory.
  static Result<std::unique_ptr<Model>> load(const std::string& model_dir, const LlamaConfig& config,
                                             const ModelOptions& options);
  // Random weights (uniform, scaled by 1/sqrt(fan_in)) for benchmarks: no checkpoint needed.
  static Result<std::unique_ptr<LlamaCudaModel>> random(const LlamaConfig& config, kernels::cuda::DType dtype,
                                                        uint64_t seed, const ModelOptions& options);
  ~LlamaCudaModel() override;

  Result<float*> enqueue_forward(const ForwardBatch& batch, int64_t* rows) override;

  int64_t weight_bytes() const { return weight_bytes_; }

 private:
  LlamaCudaModel(LlamaConfig config, kernels::cuda::DType dtype, const ModelOptions& options, std::string model_dir);
  Status init_device();
  Result<void*> alloc_weight(int64_t elements);
  Status load_weights(const std::string& model_dir);
  Status random_weights(uint64_t seed);
  // Every kernel of one forward over `rows` tokens, on stream_ (captured into a graph for
  // decode steps unless enforce_eager).
  Status run_layers(int64_t rows);
  bool batch_invariance_supported() const override;
  // The split-KV tiles one decode_attention launch takes: all of them, or in batch-invariant
  // mode (where prefill rows are tiles too) as many as the workspace budget holds.
  int64_t decode_tiles_per_launch() const;
  int64_t activation_bytes(int64_t rows) const;
  Status reserve_activations(int64_t rows);
  Status launch_graph(int64_t rows);

  LlamaConfig config_;
  RotaryEmbedding rope_;
  bool enforce_eager_ = false;
  // Decode graphs by (rows, logits rows, decode tiles, splits, context bucket, sequences, metadata and
  // activation buffer addresses): any change of these needs a new capture.
  cuda::GraphCache graphs_;  // decode steps by rows, logits rows, tiles, splits, context, sequences, buffers

  std::vector<kernels::cuda::DeviceBuffer> weights_;
  int64_t weight_bytes_ = 0;
  const void* embed_ = nullptr;
  const void* lm_head_ = nullptr;
  const void* norm_ = nullptr;
  std::vector<LlamaCudaLayer> layers_;
  kernels::cuda::DeviceBuffer inv_freq_;

  // Per-forward metadata (one upload) and activations, grown as batches grow.
  kernels::cuda::DeviceBuffer meta_, act_, logits_;
  std::vector<uint8_t> host_meta_;
  int64_t tiles_ = 0, flash_tiles_ = 0, decode_tiles_ = 0, decode_context_ = 0, logit_rows_ = 0;
  int32_t decode_splits_ = 1;
  int64_t num_seqs_ = 0;
  const void* d_ids_ = nullptr;
  const void* d_positions_ = nullptr;
  const void* d_row_seq_ = nullptr;
  const void* d_seqs_ = nullptr;
  const void* d_tiles_ = nullptr;
  const void* d_flash_tiles_ = nullptr;
  const void* d_decode_tiles_ = nullptr;
  const void* d_logit_rows_ = nullptr;
};

}  // namespace di::engine::llama

#endif  // DI_WITH_CUDA
