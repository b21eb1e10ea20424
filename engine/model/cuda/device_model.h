// DeviceModel: the part every single-GPU model shares (llama, deepseek_v2/v3, deepseek_v4): its
// ModelInfo and cache groups, the device cache memory, one stream with its GEMM handle, and the
// per-forward plumbing of the fp32-activation models. It runs no layers and owns no weights;
// each model's file keeps only what its architecture does differently. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/model/cuda/device_cache.h"
#include "engine/model/cuda/device_linear.h"
#include "engine/model/cuda/device_sampler.h"
#include "engine/model/cuda/graph_cache.h"
#include "engine/model/cuda/step_batch.h"
#include "engine/model/model.h"
#include "engine/model/safetensors.h"
#include "kernels/cache_view.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/dtype.h"
#include "kernels/cuda/fp8_gemm.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/moe_grouped.h"
#include "kernels/cuda/moe_routing.h"
#include "kernels/cuda/token_mask.h"

namespace di::engine::cuda {

// One sequence's share of a forward: its new tokens (on the host and the device), the position
// of the first, and the device views of its cache groups (by group).
struct DeviceSeq {
  int64_t L = 0, s = 0;
  bool all_logits = false;
  const int32_t* tokens = nullptr;  // host
  const int32_t* ids = nullptr;     // device
  std::vector<kernels::CacheView> views;
};

class DeviceModel : public Model {
 public:
  ~DeviceModel() override;

  const ModelInfo& info() const override { return info_; }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return groups_; }
  CacheMemory* cache_memory() override { return &memory_; }
  // Both run enqueue_forward, apply batch.masks to the device logits (filled on the host while
  // the device computes), then copy the logits out or draw on the device.
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) final;
  Status forward_sample(const ForwardBatch& batch, std::span<const SampleSpec> specs,
                        std::vector<Result<SampledToken>>& out) final;
  bool applies_logits_masks() const final { return true; }
  bool samples_on_device() const final { return true; }
  // Every CUDA family: gemm_ in its batch-invariant mode, fp8 projections on one kernel for any
  // M, and each family's attention and MoE on their fixed-order paths (deterministic_).
  bool enable_batch_invariance() final;
  bool batch_invariant() const { return deterministic_; }

  kernels::cuda::DType dtype() const { return dtype_; }

 protected:
  // `activation_reserve`: device bytes the model keeps for workspaces besides its caches.
  DeviceModel(kernels::cuda::DType dtype, const ModelOptions& options, int64_t activation_reserve);

  // The ModelInfo fields every family's config spells the same way.
  template <typename Config>
  void set_info(std::string family, std::string model_dir, const Config& c) {
    info_ = model_info_from(std::move(family), std::move(model_dir), c);
    info_.device = "cuda";
  }

  // Enqueues one forward on stream_ and returns its device logits, laid out as Model::forward
  // says (*rows of them; null when there are none). Nothing waits for the device.
  virtual Result<float*> enqueue_forward(const ForwardBatch& batch, int64_t* rows) = 0;
  // Whether the family's kernels have a batch-invariant path for this checkpoint.
  virtual bool batch_invariance_supported() const { return true; }
  // Once the stream has finished the forward: the model's device-side checks.
  virtual Status check_forward() { return Status::ok(); }

  // Before any weight is allocated: the checkpoint's weights in the dtype this model uploads them
  // in (MTP layers only when `include_mtp`) plus the activation reserve against what the device
  // has free within gpu_memory_utilization / gpu_memory_limit_bytes; out of memory with the
  // bytes needed, the bytes free and the GPUs it would need when they do not fit.
  Status check_memory(const Checkpoint& checkpoint, int32_t num_hidden_layers, bool include_mtp);

  // Unsupported when the config field `field` is above `limit`, what the CUDA kernels take.
  static Status check_at_most(const char* field, int64_t value, int64_t limit);

  // Fails clearly when no GPU is visible; else creates stream_ and gemm_ on it.
  Status open_stream();
  // A host fp32 table (a rope's inverse frequencies) into `buf`.
  static Status upload_f32(const std::vector<float>& host, kernels::cuda::DeviceBuffer& buf);
  // A host table of device pointers (the experts' weights, by layer and expert) into `buf`;
  // returns its device address.
  static Result<const void* const*> upload_table(const std::vector<const void*>& host,
                                                 kernels::cuda::DeviceBuffer& buf);

  // y[M, N] (fp32, rows ldy apart) = x[M, K] (fp32, rows ldx apart) @ W^T, W [N, K] in the model
  // dtype. For bf16 weights x is first rounded into linear_stage_ (M * K elements), which the
  // model points at a workspace of its own before the first call.
  Status linear(const float* x, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y, int64_t ldy);

  // y[M, w.out] (fp32, rows ldy apart) = x[M, w.in] @ W^T for a DeviceLinear. x is fp32 (rows ldx
  // apart); x16, when the caller has it, is its bf16 copy (rows w.in apart) and saves a rounding
  // pass. fp8 weights in an fp32 model run against the fp32 activations (exact to the dequantized
  // weights); in a bf16 model up to kW8A16MaxRows rows stream the weights against bf16
  // activations, and more rows take cuBLASLt's block-scaled fp8 GEMM over activations quantized
  // per 1 x 128 (when fp8_activations_ and the GEMM takes the weight) or a bf16 GEMM over the
  // weight dequantized into dequant_stage_.
  Status project(const DeviceLinear& w, const float* x, int64_t ldx, const void* x16, int64_t M, float* y,
                 int64_t ldy);
  // Several projections of one input: outs[i].y [M, outs[i].w.out] (rows ldy apart) = x @ W_i^T.
  // At decode's few rows the bf16 ones stream as one GEMV launch (kernels/cuda/gemv.h), each to
  // the bits project() gives it alone; fp8 ones, and every one at more rows, go through project().
  struct ProjectOut {
    DeviceLinear w;
    float* y = nullptr;
    int64_t ldy = 0;  // 0: w.out
  };
  Status project_many(std::span<const ProjectOut> outs, const float* x, const void* x16, int64_t M);
  // The grouped output projection as `groups` products: group g multiplies columns
  // [g * w.in, (g + 1) * w.in) of x (rows groups * w.in apart; fp32 x, or its bf16 copy x16) by
  // rows [g * w.out / groups, ...) of W into y + g * w.out / groups (rows ldy apart).
  Status project_grouped(const DeviceLinear& w, const float* x, const void* x16, int64_t M, int64_t groups, float* y,
                         int64_t ldy);
  // Staging bytes an fp8 projection of `rows` rows and up to `cols` inputs needs at fp8_stage_.
  static int64_t fp8_stage_bytes(int64_t rows, int64_t cols);
  // Room in dequant_stage_ for the largest fp8 weight (elements), before any forward is captured.
  Status reserve_dequant_stage(int64_t elements);

  // A MoE layer's routed experts, grouped without leaving the device (so the step stays
  // capturable): the pairs of `r.expert_ids` [rows, top_k] grouped by expert (an id outside
  // [0, experts) sets *r.bad_id), each expert's SwiGLU over the rows `x` of its pairs, and the
  // pairs' outputs added into `out` weighted by `r.expert_weights`. `g` comes with the experts'
  // weights and clip (w13, w2, their fp8 scales, swiglu_limit), `moe_grouped_args` with the shape.
  struct RoutedPairs {
    const int32_t* expert_ids;
    const float* expert_weights;
    int32_t* offsets;    // [2 experts + 2] and slot_pair [pairs]: moe_group_pairs' scratch
    int32_t* slot_pair;
    float* act;          // [pairs, inter]
    float* y;            // [pairs, hidden]
    int32_t* bad_id;
  };
  Status run_grouped_experts(kernels::cuda::MoeGroupedArgs g, const float* x, int64_t rows, const RoutedPairs& r,
                             float* out);
  // A prefill's routed experts with the pairs grouped on the host (ExpertRows), bf16 weights:
  // every pair's row already gathered as bf16 (x16 [pairs, hidden], in expert order: expert e
  // owns pairs count[e] .. count[e + 1] - 1), then runs of consecutive experts of at most
  // max_rows pairs (the buffers' rows), each one grouped product for gate|up (w13[e]:
  // [2 inter, hidden]), SwiGLU clipped at `limit` (infinity: plain) into bf16, one grouped
  // product for down (w2[e]: [hidden, inter]), and the pairs' weighted scatter-add into `out`.
  struct ExpertRuns {
    const std::vector<int64_t>* count = nullptr;
    std::vector<const void*> w13, w2;
    const uint16_t* x16 = nullptr;
    const int32_t* rows = nullptr;     // [pairs] token row of each pair
    const float* weights = nullptr;    // [pairs]
    int64_t hidden = 0, inter = 0, max_rows = 0;
    float limit = 0.f;
    float* gate_up = nullptr;          // [max_rows, 2 inter]
    uint16_t* act16 = nullptr;         // [max_rows, inter]
    float* y = nullptr;                // [max_rows, hidden]
    float* out = nullptr;              // [tokens, hidden], added to
  };
  Status experts_in_runs(const ExpertRuns& r);
  // The routing's shape and scale, and the grouped MoE's shape, which every MoE family's config
  // spells the same way.
  template <typename Config>
  static kernels::cuda::RoutingArgs routing_args(const Config& c) {
    kernels::cuda::RoutingArgs r;
    r.experts = c.n_routed_experts;
    r.top_k = c.num_experts_per_tok;
    r.routed_scaling = static_cast<float>(c.routed_scaling_factor);
    return r;
  }
  template <typename Config>
  static kernels::cuda::MoeGroupedArgs moe_grouped_args(const Config& c) {
    kernels::cuda::MoeGroupedArgs g;
    g.top_k = c.num_experts_per_tok;
    g.experts = c.n_routed_experts;
    g.hidden = c.hidden_size;
    g.inter = c.moe_intermediate_size;
    return g;
  }

  // Between packing a forward's StepBatch and running it: `reserve` sizes the model's workspaces
  // for the step's rows, its context (rounded up to its bucket when the step replays a graph, so
  // that one graph serves many steps) and `logit_rows` logits rows, setting *moved when it had to
  // reallocate them; then the step goes to the device on stream_, and `graphs` are dropped when
  // anything they point at moved.
  using ReserveStep = std::function<Status(int64_t rows, int64_t context, int64_t logit_rows, bool* moved)>;
  Status stage_step(StepBatch& step, bool graph, int64_t logit_rows, const ReserveStep& reserve, GraphCache& graphs);

  // The forward of a model that runs its sequences one after another: checks the batch
  // (positions against `max_positions` unless 0) and that every cache group of every sequence is
  // paged in device memory with room for its entries, uploads all token ids and block tables at
  // once, lets `reserve` size the workspaces for the batch and runs each sequence into its logits
  // rows with `run`; returns the device logits (enqueue_forward's contract).
  Result<float*> enqueue_sequences(const ForwardBatch& batch, int64_t max_positions, int64_t* rows,
                                   const std::function<Status()>& reserve,
                                   const std::function<Status(const DeviceSeq&, float*)>& run);

  kernels::cuda::DType dtype_;
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  cuda::DeviceCacheMemory memory_;
  double utilization_ = 0.9;
  int64_t limit_bytes_ = 0;
  int64_t activation_reserve_ = 0;
  void* stream_ = nullptr;  // cudaStream_t
  kernels::cuda::Gemm gemm_;
  void* linear_stage_ = nullptr;
  void* fp8_stage_ = nullptr;  // quantized activations and their scales, next to linear_stage_
  kernels::cuda::Fp8Gemm fp8_gemm_;
  kernels::cuda::DeviceBuffer dequant_stage_;
  bool fp8_activations_ = true;  // ModelOptions::fp8_activations
  bool fp8_pow2_scales_ = false;  // activation scales rounded to powers of two (DeepSeek-V4's ue8m0)
  // Batch-invariant mode (enable_batch_invariance): no kernel choice, split or reduction order
  // may depend on the step's rows, sequences or contexts, only on the row's own.
  bool deterministic_ = false;
  DeviceSampler sampler_;  // the forward's draws

 private:
  Status project_fp8(const DeviceLinear& w, const float* x, int64_t ldx, const void* x16, int64_t M, int64_t groups,
                     float* y, int64_t ldy);
  Result<const int32_t*> upload_metadata();
  Status apply_masks(LogitsMaskSource& masks, const ForwardBatch& batch, float* logits);

  std::vector<int32_t> metadata_host_;  // token ids, then each group's block table, per sequence
  kernels::cuda::DeviceBuffer metadata_, logits_out_;
  kernels::cuda::TokenMaskStager masks_;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
