// EngineRequest: what the engine runs for one prepared request besides its prompt ids — the
// sampling parameters and the grammar its output must follow. The typed seam between the recipe
// and the engine (as vLLM v1 passes an EngineCoreRequest): recipe/prepare fills it, the C ABI's
// di_submit_prepared hands it to the engine unchanged. No JSON crosses here; JSON exists only at
// the C ABI's accessors (di_prepared_*_json) and in di_options.
//
// Stop *strings* are not in `sampling.stop`: they must not fire inside reasoning or tool markup,
// so the recipe's output parser owns them and the caller cancels the request when it stops.
#pragma once

#include <optional>

#include "request/constraint_spec.h"
#include "request/sampling_params.h"

namespace di::request {

struct EngineRequest {
  SamplingParams sampling;
  std::optional<ConstraintSpec> constraint;  // nullopt: unconstrained
};

}  // namespace di::request
