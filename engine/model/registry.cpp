// load_model and the family table. See registry.h.
#include "engine/model/registry.h"

#include <filesystem>
#include <chrono>
#include <fstream>

#include "base/log.h"

#include "engine/model/deepseek_v2/mla_model.h"
#include "engine/model/deepseek_v4/v4_model.h"
#include "engine/model/llama/llama_model.h"
#include "engine/backend/loader.h"
#include "engine/model/weight_progress.h"

namespace di::engine {

const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> kFamilies = {
      {"deepseek_v4", &deepseek_v4::create_model},
      {"deepseek_v3", &deepseek_v2::create_mla_model},
      {"deepseek_v2", &deepseek_v2::create_mla_model},
      {"llama", &llama::create_llama_model},
      {"qwen2", &llama::create_llama_model},
      {"qwen3", &llama::create_llama_model},
  };
  return kFamilies;
}

namespace {

// The checkpoint's files and bytes, for the load log.
std::pair<int, int64_t> checkpoint_files(const std::string& model_dir) {
  int files = 0;
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(model_dir, ec)) {
    if (e.path().extension() != ".safetensors") continue;
    ++files;
    bytes += static_cast<int64_t>(e.file_size(ec));
  }
  return {files, bytes};
}

}  // namespace

Result<nlohmann::json> read_model_config(const std::string& model_dir) {
  const std::filesystem::path path = std::filesystem::path(model_dir) / "config.json";
  std::ifstream in(path);
  if (!in) return Status::not_found(model_dir + ": no config.json");
  nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    return Status::parse(model_dir + "/config.json: not a JSON object");
  return config;
}

Result<std::unique_ptr<Model>> load_model(const std::string& model_dir,
                                          const ModelOptions& options) {
  DI_ASSIGN_OR_RETURN(nlohmann::json config, read_model_config(model_dir));
  if (!config.contains("model_type") || !config["model_type"].is_string())
    return Status::invalid_argument("config.json: model_type: expected a string");
  const std::string type = config["model_type"].get<std::string>();
  if (options.device != "cpu" && options.device != "cuda" && options.device != "auto")
    return Status::invalid_argument("device: expected \"auto\", \"cpu\" or \"cuda\", got \"" + options.device + "\"");
  auto int_field = [&](const char* k) -> long long {
    return config.contains(k) && config[k].is_number_integer() ? config[k].get<long long>() : -1;
  };
  log::info("config: %s/config.json: model_type %s, %lld layers, hidden_size %lld, vocab_size %lld", model_dir.c_str(),
            type.c_str(), int_field("num_hidden_layers"), int_field("hidden_size"), int_field("vocab_size"));
  for (const ModelFamily& f : model_families()) {
    if (type != f.model_type) continue;
    ModelOptions resolved = options;
    // CUDA lives in a backend library loaded on first use (engine/backend/loader.h).
    const backend::DeviceBackend* cuda = options.device == "cpu" ? nullptr : backend::cuda_backend();
    if (options.device == "auto") resolved.device = cuda && cuda->supports(type) ? "cuda" : "cpu";
    if (resolved.device == "cuda") {
      if (cuda == nullptr) return Status::unsupported("device 'cuda': " + backend::cuda_state().reason);
      if (!cuda->supports(type))
        return Status::unsupported("device 'cuda': model_type '" + type + "' has no CUDA path yet");
    }
    log::info("device: %s (asked: %s)%s", resolved.device.c_str(), options.device.c_str(),
              resolved.device == "cpu" && options.device == "auto"
                  ? (cuda ? ", no CUDA path for this family" : (", CUDA backend: " + backend::cuda_state().reason).c_str())
                  : "");
    const auto [files, bytes] = checkpoint_files(model_dir);
    log::info("weights: %d safetensors files, %s mapped from %s", files, log::format_bytes(static_cast<double>(bytes)).c_str(),
              model_dir.c_str());
    const auto start = std::chrono::steady_clock::now();
    // Loads over 2 s show their progress (the bar or records); the backend reports through it.
    LoadProgress progress(bytes);
    resolved.weight_progress = &progress;
    ScopedWeightProgress current(&progress);
    auto model = resolved.device == "cuda" ? cuda->create(type, model_dir, config, resolved)
                                           : f.create(model_dir, config, resolved);
    // "auto" asked for whatever runs: a checkpoint the CUDA path refuses (a shape its kernels do not take, say) runs on
    // the CPU instead, as the log says.
    if (!model.is_ok() && model.status().code() == StatusCode::kUnsupported && options.device == "auto" &&
        resolved.device == "cuda") {
      log::info("device: cpu (asked: auto), CUDA path: %s", model.status().message().c_str());
      resolved.device = "cpu";
      model = f.create(model_dir, config, resolved);
    }
    progress.finish();
    if (model.is_ok())
      log::info("weights: loaded in %.2f s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return model;
  }
  std::string known;
  for (const ModelFamily& f : model_families()) known += (known.empty() ? "" : ", ") + std::string(f.model_type);
  return Status::unsupported("config.json: model_type '" + type + "' is not supported (known: " +
                             known + ")");
}

}  // namespace di::engine
