// ExpertIdCheck: see expert_id_check.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/expert_id_check.h"

#include "kernels/cuda/device.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

Status ExpertIdCheck::init() {
  DI_RETURN_IF_ERROR(flag_.allocate(4));
  DI_RETURN_IF_ERROR(host_.grow(4, "expert id check"));
  clear_host();
  return kc::fill_zero(flag_.get(), 4);
}

Status ExpertIdCheck::copy_to_host(void* stream) { return kc::copy_to_host_async(host_.get(), flag_.get(), 4, stream); }

Status ExpertIdCheck::check(const std::string& family) {
  if (!*host_.as<int32_t>()) return Status::ok();
  clear_host();
  DI_RETURN_IF_ERROR(kc::fill_zero(flag_.get(), 4));
  return Status::internal(family + " cuda: a routed expert id is outside [0, n_routed_experts)");
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
