// Reads di_options into the engine's configuration: engine-scope keys into EngineConfig and
// ModelOptions (di_engine_create), sampling-scope keys into SamplingParams (di_submit), and writes
// SamplingParams back as sampling keys (di_prepared_sampling_json). Range checks happen in the
// engine; here only scope and shape (a key of the wrong scope is an error).
#pragma once

#include <string>

#include "base/status.h"
#include "deepinfer.h"
#include "engine/constrain/grammar.h"
#include "engine/engine.h"
#include "engine/model/model.h"
#include "engine/sample/sampling_params.h"

namespace di::capi {

struct EngineSetup {
  engine::EngineConfig config;
  engine::ModelOptions model;
  engine::constrain::GrammarLimits grammar_limits;  // structured output compiles
};

Result<EngineSetup> engine_setup_from_options(const di_options* options);
Result<engine::SamplingParams> sampling_from_options(const di_options* options);

// The reverse, for di_prepared_sampling_json: the fields that differ from the defaults, under
// their sampling option keys, so that di_options_update_json + di_submit reproduce `params`.
std::string sampling_options_json(const engine::SamplingParams& params);

}  // namespace di::capi
