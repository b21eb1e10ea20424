// The table of model families load_model dispatches on (config.json's model_type). Adding a
// family is one line in registry.cpp; a family never registers itself from a static initialiser
// (static libraries drop unreferenced objects).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model.h"

namespace di::engine {

using ModelFactory = Result<std::unique_ptr<Model>> (*)(const std::string& model_dir,
                                                         const nlohmann::json& config,
                                                         const ModelOptions& options);

struct ModelFamily {
  const char* model_type;  // config.json "model_type"
  ModelFactory create;     // the CPU model; device paths come from engine/backend
};

const std::vector<ModelFamily>& model_families();

// Reads and parses model_dir/config.json (a clear error when missing or malformed).
Result<nlohmann::json> read_model_config(const std::string& model_dir);

}  // namespace di::engine
