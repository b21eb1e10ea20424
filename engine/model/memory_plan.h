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

}  // namespace di::engine
