// Reads di_options into the engine's configuration: engine-scope keys into EngineConfig and
// ModelOptions (di_engine_create), sampling-scope keys into SamplingParams (di_submit). Range
// checks happen in the engine; here only scope and shape (a key of the wrong scope is an error).
#pragma once

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

}  // namespace di::capi
