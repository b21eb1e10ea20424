// Weight memory plan. See memory_plan.h.
#include "engine/model/memory_plan.h"

#include <algorithm>
#include <cstdlib>
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

}  // namespace

MemoryPlan plan_weight_memory(const Checkpoint& ckpt, int32_t num_hidden_layers, bool include_mtp) {
  int64_t embed = 0, head = 0, other = 0;
  std::map<int64_t, int64_t> layers, mtp;
  for (const std::string& full : ckpt.names()) {
    const TensorView* t = ckpt.find(full);
    const std::string name = full.rfind("model.", 0) == 0 ? full.substr(6) : full;
    if (int64_t l = index_after(name, "layers."); l >= 0) {
      if (l < num_hidden_layers) layers[l] += t->nbytes;
      else mtp[l - num_hidden_layers] += t->nbytes;
    } else if (int64_t m = index_after(name, "mtp."); m >= 0) {
      mtp[m] += t->nbytes;
    } else if (name == "embed.weight" || name == "embed_tokens.weight") {
      embed += t->nbytes;
    } else if (name == "head.weight" || full == "lm_head.weight") {
      head += t->nbytes;
    } else {
      other += t->nbytes;
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
