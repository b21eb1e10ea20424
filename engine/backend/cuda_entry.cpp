// The entry point of libdeepinfer_cuda.so: the CUDA model paths of every family behind the
// DeviceBackend table (backend.h). Only this file's di_backend_cuda_v1 is exported; the core
// library never links CUDA, so it runs on hosts without the CUDA libraries.
#include <cuda_runtime_api.h>

#include <exception>

#include "engine/backend/backend.h"
#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_cuda_model.h"
#include "engine/model/deepseek_v2/mla_weights.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/v4_cuda_model.h"
#include "engine/model/deepseek_v4/weights.h"
#include "engine/model/llama/llama_config.h"
#include "engine/model/llama/llama_cuda_model.h"
#include "engine/model/weight_progress.h"

namespace di::engine::backend {
namespace {

int32_t device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA driver reports no device";
  return n;
}

bool is_llama(const std::string& t) { return t == "llama" || t == "qwen2" || t == "qwen3"; }
bool is_mla(const std::string& t) { return t == "deepseek_v2" || t == "deepseek_v3"; }

bool supports(const std::string& t) { return is_llama(t) || is_mla(t) || t == "deepseek_v4"; }

Result<std::unique_ptr<Model>> create_unguarded(const std::string& type, const std::string& dir,
                                                const nlohmann::json& json, const ModelOptions& options) {
  if (is_llama(type)) {
    DI_ASSIGN_OR_RETURN(llama::LlamaConfig config, llama::parse_llama_config(json));
    return llama::LlamaCudaModel::load(dir, config, options);
  }
  if (is_mla(type)) {
    DI_ASSIGN_OR_RETURN(deepseek_v2::MlaConfig config, deepseek_v2::parse_mla_config(json));
    DI_ASSIGN_OR_RETURN(auto weights, deepseek_v2::load_mla_weights(dir, config, /*for_device=*/true));
    return deepseek_v2::MlaCudaModel::load(dir, std::move(config), std::move(weights), options);
  }
  if (type == "deepseek_v4") {
    DI_ASSIGN_OR_RETURN(deepseek_v4::DeepseekV4Config config, deepseek_v4::parse_config(json));
    DI_ASSIGN_OR_RETURN(auto weights, deepseek_v4::load_weights(dir, config, /*for_device=*/true));
    return deepseek_v4::V4CudaModel::load(dir, std::move(config), std::move(weights), options);
  }
  return Status::unsupported("device 'cuda': model_type '" + type + "' has no CUDA path yet");
}

// Exceptions stay on this side of the boundary: the two sides carry separate C++ runtimes.
Result<std::unique_ptr<Model>> create(const std::string& type, const std::string& dir,
                                      const nlohmann::json& json, const ModelOptions& options) {
  try {
    // This library's WeightLoader reports to the core's LoadProgress.
    ScopedWeightProgress current(options.weight_progress);
    return create_unguarded(type, dir, json, options);
  } catch (const std::bad_alloc&) {
    return Status::internal("device 'cuda': out of host memory while loading " + dir);
  } catch (const std::exception& e) {
    return Status::internal(std::string("device 'cuda': ") + e.what());
  }
}

constexpr DeviceBackend kCuda = {kBackendAbi, DI_BACKEND_VERSION, "cuda", &device_count, &supports, &create};

}  // namespace
}  // namespace di::engine::backend

extern "C" __attribute__((visibility("default"))) const di::engine::backend::DeviceBackend* di_backend_cuda_v1() {
  return &di::engine::backend::kCuda;
}
