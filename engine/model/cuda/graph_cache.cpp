// GraphCache: see graph_cache.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/graph_cache.h"

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

void GraphCache::clear() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
  graphs_.clear();
}

Status GraphCache::launch(const std::vector<int64_t>& key, void* stream, const std::function<Status()>& record) {
  auto s = static_cast<cudaStream_t>(stream);
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    if (graphs_.size() >= max_graphs_) clear();
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), "graph capture"));
    const Status st = record();
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(s, &graph);  // ends the capture even when record failed
    DI_RETURN_IF_ERROR(st);
    DI_RETURN_IF_ERROR(kc::cuda_status(end, "graph capture end"));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    DI_RETURN_IF_ERROR(kc::cuda_status(inst, "graph instantiate"));
    it = graphs_.emplace(key, exec).first;
  }
  return kc::cuda_status(cudaGraphLaunch(static_cast<cudaGraphExec_t>(it->second), s), "graph launch");
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
