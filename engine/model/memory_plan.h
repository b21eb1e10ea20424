// Weight memory at load: what each part of a checkpoint (embedding, head, each decoder layer, each
// MTP layer, the rest) takes in its stored format, and how many GPUs of a given free size that
// needs when layers are spread in order (pipeline style). A device loader checks this before it
// allocates, so a model that does not fit is an error with the numbers, never a CUDA OOM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/model/safetensors.h"

namespace di::engine {

struct WeightPart {
  std::string name;   // "embed", "head", "layers.N", "mtp.N", "other"
  int64_t bytes = 0;  // data as stored: fp8/fp4 bytes plus their scales
};

struct MemoryPlan {
  std::vector<WeightPart> parts;  // embed, layers in order, mtp, head, other
  int64_t total_bytes = 0;
  int64_t largest_part_bytes = 0;
};

// Groups tensors by name, DeepSeek's (embed.weight, layers.N.*, mtp.N.*, head.weight) and
// transformers' (model.embed_tokens.weight, model.layers.N.*, lm_head.weight); for DeepSeek-V3
// the layers at and past `num_hidden_layers` are its MTP layers. With `include_mtp` false they
// are left out (MTP off).
MemoryPlan plan_weight_memory(const Checkpoint& checkpoint, int32_t num_hidden_layers, bool include_mtp);

// GPUs needed to hold the parts in order with `free_bytes` per GPU minus `reserve_bytes` each
// (activations, caches); parts are never split. An error when a single part does not fit one GPU.
Result<int32_t> gpus_needed(const MemoryPlan& plan, int64_t free_bytes, int64_t reserve_bytes);

// OK when the plan fits `num_gpus`; otherwise an error naming bytes needed, bytes free and the
// GPUs it needs.
Status check_fits(const MemoryPlan& plan, int64_t free_bytes, int64_t reserve_bytes, int32_t num_gpus);

// Device bytes `t` takes once a CUDA model has uploaded it: fp8 codes as stored, packed FP4
// (I8/U8 matrices with scales) re-encoded to e4m3 at twice their bytes, scales as fp32 (an FP4
// weight's 1 x 32 scales as 1 x 128), float matrices named *.weight in the model's dtype (bf16
// when `bf16`, else fp32), other float tensors as fp32, integer tables as stored.
int64_t device_tensor_bytes(const Checkpoint& checkpoint, const TensorView& t, bool bf16);

// plan_weight_memory with each tensor counted in the dtype a CUDA model uploads it in.
MemoryPlan plan_device_weight_memory(const Checkpoint& checkpoint, int32_t num_hidden_layers, bool include_mtp,
                                     bool bf16);

// The device bytes a model may take at load: what is free, within `utilization` of the total
// (less what others use), and within `limit_bytes` when that is > 0 (ModelOptions).
int64_t device_weight_budget(int64_t free_bytes, int64_t total_bytes, double utilization, int64_t limit_bytes);

// OK when the weights plus `reserve_bytes` fit `budget_bytes`; else resource exhausted
// (kOutOfMemory) naming the bytes needed, the bytes free and the GPUs of this size it would need.
Status check_device_fits(const MemoryPlan& plan, int64_t budget_bytes, int64_t reserve_bytes);

}  // namespace di::engine
