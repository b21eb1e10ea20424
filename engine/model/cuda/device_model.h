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
#include "engine/model/cuda/device_sampler.h"
#include "engine/model/model.h"
#include "kernels/cuda/cache_view.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/dtype.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/token_mask.h"

namespace di::engine::cuda {

// One sequence's share of a forward: its new tokens (on the host and the device), the position
// of the first, and the device views of its cache groups (by group).
struct DeviceSeq {
  int64_t L = 0, s = 0;
  bool all_logits = false;
  const int32_t* tokens = nullptr;  // host
  const int32_t* ids = nullptr;     // device
  std::vector<kernels::cuda::CacheView> views;
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

  kernels::cuda::DType dtype() const { return dtype_; }

 protected:
  // `activation_reserve`: device bytes the model keeps for workspaces besides its caches.
  DeviceModel(kernels::cuda::DType dtype, const ModelOptions& options, int64_t activation_reserve);

  // The ModelInfo fields every family's config spells the same way.
  template <typename Config>
  void set_info(std::string family, std::string model_dir, const Config& c) {
    info_.family = std::move(family);
    info_.model_dir = std::move(model_dir);
    info_.vocab_size = c.vocab_size;
    info_.max_position_embeddings = c.max_position_embeddings;
    info_.bos_token_id = c.bos_token_id;
    info_.eos_token_ids = c.eos_token_ids;
    info_.device = "cuda";
  }

  // Enqueues one forward on stream_ and returns its device logits, laid out as Model::forward
  // says (*rows of them; null when there are none). Nothing waits for the device.
  virtual Result<float*> enqueue_forward(const ForwardBatch& batch, int64_t* rows) = 0;
  // Once the stream has finished the forward: the model's device-side checks.
  virtual Status check_forward() { return Status::ok(); }

  // Fails clearly when no GPU is visible; else creates stream_ and gemm_ on it.
  Status open_stream();
  // A host fp32 table (a rope's inverse frequencies) into `buf`.
  static Status upload_f32(const std::vector<float>& host, kernels::cuda::DeviceBuffer& buf);

  // y[M, N] (fp32, rows ldy apart) = x[M, K] (fp32, rows ldx apart) @ W^T, W [N, K] in the model
  // dtype. For bf16 weights x is first rounded into linear_stage_ (M * K elements), which the
  // model points at a workspace of its own before the first call.
  Status linear(const float* x, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y, int64_t ldy);

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
  void* stream_ = nullptr;  // cudaStream_t
  kernels::cuda::Gemm gemm_;
  void* linear_stage_ = nullptr;

 private:
  Result<const int32_t*> upload_metadata();
  Status apply_masks(LogitsMaskSource& masks, const ForwardBatch& batch, float* logits);
  static kernels::cuda::CacheView cache_view(const PagedGroupView& v, const int32_t* block_ids);

  std::vector<int32_t> metadata_host_;  // token ids, then each group's block table, per sequence
  kernels::cuda::DeviceBuffer metadata_, logits_out_;
  kernels::cuda::TokenMaskStager masks_;
  DeviceSampler sampler_;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
