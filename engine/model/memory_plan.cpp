// Weight memory plan. See memory_plan.h.
#include "engine/model/memory_plan.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

namespace di::engine {
namespace {

// The index after "layers." / "mtp." at the start of `name`, or -1.
int64_t index_after(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return -1;
  const char* p = name.c_str() + prefix.size();
  char* end = nullptr;
  const long v = std::strtol(p, &end, 10);
  return (end != p && *end == '.') ? v : -1;
}

// The checkpoint's parts with each tensor counted as `bytes_of` says.
MemoryPlan plan_parts(const Checkpoint& ckpt, int32_t num_hidden_layers, bool include_mtp,
                      const std::function<int64_t(const TensorView&)>& bytes_of) {
  int64_t embed = 0, head = 0, other = 0;
  std::map<int64_t, int64_t> layers, mtp;
  for (const std::string& full : ckpt.names()) {
    const TensorView* t = ckpt.find(full);
    const int64_t nbytes = bytes_of(*t);
    const std::string name = full.rfind("model.", 0) == 0 ? full.substr(6) : full;
    if (int64_t l = index_after(name, "layers."); l >= 0) {
      if (l < num_hidden_layers) layers[l] += nbytes;
      else mtp[l - num_hidden_layers] += nbytes;
    } else if (int64_t m = index_after(name, "mtp."); m >= 0) {
      mtp[m] += nbytes;
    } else if (name == "embed.weight" || name == "embed_tokens.weight") {
      embed += nbytes;
    } else if (name == "head.weight" || full == "lm_head.weight") {
      head += nbytes;
    } else {
      other += nbytes;
    }
  }
  MemoryPlan plan;
  plan.parts.push_back({"embed", embed});
  for (const auto& [l, b] : layers) plan.parts.push_back({"layers." + std::to_string(l), b});
  if (include_mtp)
    for (const auto& [m, b] : mtp) plan.parts.push_back({"mtp." + std::to_string(m), b});
  plan.parts.push_back({"head", head});
  plan.parts.push_back({"other", other});
  for (const WeightPart& p : plan.parts) {
    plan.total_bytes += p.bytes;
    plan.largest_part_bytes = std::max(plan.largest_part_bytes, p.bytes);
  }
  return plan;
}

bool ends_with(const std::string& s, const std::string& sfx) {
  return s.size() >= sfx.size() && s.compare(s.size() - sfx.size(), sfx.size(), sfx) == 0;
}

// The weight a scale tensor ("x.scale" / "x.weight_scale_inv") belongs to, or null.
const TensorView* scaled_weight(const Checkpoint& ckpt, const std::string& name) {
  for (const char* suffix : {".scale", ".weight_scale_inv", ".weight_scale"}) {
    const std::string sfx(suffix);
    if (name.size() > sfx.size() && ends_with(name, sfx)) {
      const std::string stem = name.substr(0, name.size() - sfx.size());
      if (const TensorView* w = ckpt.find(stem + ".weight")) return w;
      if (const TensorView* w = ckpt.find(stem)) return w;
    }
  }
  return nullptr;
}

}  // namespace

MemoryPlan plan_weight_memory(const Checkpoint& ckpt, int32_t num_hidden_layers, bool include_mtp) {
  return plan_parts(ckpt, num_hidden_layers, include_mtp, [](const TensorView& t) { return t.nbytes; });
}

int64_t device_tensor_bytes(const Checkpoint& ckpt, const TensorView& t, bool bf16) {
  const int64_t n = t.numel();
  switch (t.dtype) {
    case DType::kF8E4M3:
      return n;  // fp8 codes stay as they are
    case DType::kI8:
    case DType::kU8:
      // Packed FP4 (two codes a byte) is re-encoded to e4m3 on upload: one byte per code.
      return t.shape.size() >= 2 ? 2 * t.nbytes : t.nbytes;
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kF8E8M0:
      if (const TensorView* w = scaled_weight(ckpt, t.name)) {
        // Scales go up as fp32; an FP4 weight's 1 x 32 scales become 1 x 128 (a quarter as many).
        const bool fp4 = w->dtype == DType::kI8 || w->dtype == DType::kU8;
        return fp4 ? n : 4 * n;
      }
      // Linear weights in the model's dtype; vectors (norms, biases) and other float tables
      // (hyper-connection mixes, sinks) as fp32.
      return t.shape.size() >= 2 && ends_with(t.name, ".weight") ? n * (bf16 ? 2 : 4) : 4 * n;
    default:
      return t.nbytes;  // integer tables as stored
  }
}

MemoryPlan plan_device_weight_memory(const Checkpoint& ckpt, int32_t num_hidden_layers, bool include_mtp, bool bf16) {
  return plan_parts(ckpt, num_hidden_layers, include_mtp,
                    [&](const TensorView& t) { return device_tensor_bytes(ckpt, t, bf16); });
}

int64_t device_weight_budget(int64_t free_bytes, int64_t total_bytes, double utilization, int64_t limit_bytes) {
  const int64_t used = total_bytes - free_bytes;
  int64_t budget = std::min(free_bytes, static_cast<int64_t>(static_cast<double>(total_bytes) * utilization) - used);
  if (limit_bytes > 0) budget = std::min(budget, limit_bytes);
  return std::max<int64_t>(budget, 0);
}

Status check_device_fits(const MemoryPlan& plan, int64_t budget_bytes, int64_t reserve_bytes) {
  const int64_t needed = plan.total_bytes + reserve_bytes;
  if (needed <= budget_bytes) return Status::ok();
  std::string gpus;
  // GPUs of this budget the weights would take spread layer by layer (parts never split).
  if (Result<int32_t> g = gpus_needed(plan, budget_bytes, reserve_bytes); g.is_ok())
    gpus = "; it needs " + std::to_string(*g) + " GPUs of this size";
  else
    gpus = "; " + g.status().message();
  return Status::out_of_memory("device 'cuda': the model needs " + std::to_string(needed) + " bytes (" +
                               std::to_string(plan.total_bytes) + " of weights + " + std::to_string(reserve_bytes) +
                               " reserved for workspaces), only " + std::to_string(budget_bytes) +
                               " bytes free for it (gpu_memory_utilization / gpu_memory_limit_bytes)" + gpus);
}

Result<int32_t> gpus_needed(const MemoryPlan& plan, int64_t free_bytes, int64_t reserve_bytes) {
  const int64_t room = free_bytes - reserve_bytes;
  int32_t gpus = 1;
  int64_t used = 0;
  for (const WeightPart& p : plan.parts) {
    if (p.bytes > room)
      return Status::out_of_memory("weights part '" + p.name + "' needs " + std::to_string(p.bytes) +
                                   " bytes, more than one GPU's " + std::to_string(room) + " usable (" +
                                   std::to_string(free_bytes) + " free, " + std::to_string(reserve_bytes) +
                                   " reserved)");
    if (used + p.bytes > room) {
      ++gpus;
      used = 0;
    }
    used += p.bytes;
  }
  return gpus;
}

Status check_fits(const MemoryPlan& plan, int64_t free_bytes, int64_t reserve_bytes, int32_t num_gpus) {
  DI_ASSIGN_OR_RETURN(int32_t need, gpus_needed(plan, free_bytes, reserve_bytes));
  if (need <= num_gpus) return Status::ok();
  return Status::out_of_memory("weights need " + std::to_string(plan.total_bytes) + " bytes; " +
                               std::to_string(num_gpus) + " GPU(s) with " + std::to_string(free_bytes) +
                               " bytes free each (" + std::to_string(reserve_bytes) + " reserved) hold less: needs " +
                               std::to_string(need) + " GPUs");
}

}  // namespace di::engine
