// ExpertIdCheck: see expert_id_check.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/expert_id_check.h"

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

ExpertIdCheck::~ExpertIdCheck() {
  if (host_) cudaFreeHost(host_);
}

Status ExpertIdCheck::init() {
  DI_RETURN_IF_ERROR(flag_.allocate(4));
  void* pinned = nullptr;
  DI_RETURN_IF_ERROR(kc::cuda_status(cudaMallocHost(&pinned, 4), "cudaMallocHost (expert id check)"));
  host_ = static_cast<int32_t*>(pinned);
  *host_ = 0;
  return kc::fill_zero(flag_.get(), 4);
}

Status ExpertIdCheck::copy_to_host(void* stream) { return kc::copy_to_host_async(host_, flag_.get(), 4, stream); }

Status ExpertIdCheck::check(const std::string& family) {
  if (!*host_) return Status::ok();
  *host_ = 0;
  DI_RETURN_IF_ERROR(kc::fill_zero(flag_.get(), 4));
  return Status::internal(family + " cuda: a routed expert id is outside [0, n_routed_experts)");
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
