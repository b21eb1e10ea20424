// The grammar a prepared request's output must follow, as the engine takes it: the response_format
// and, when tools need it, the DSML tool-call block with schema-checked arguments; reasoning stays
// free when the prompt opened thinking. The recipe decides this because it owns the DSML layout
// (recipe/encoding/dsml_grammar.h); the engine only compiles the generic grammar it is given.
#pragma once

#include <optional>

#include "base/status.h"
#include "recipe/encoding/encoder.h"
#include "recipe/prepare/prepared.h"
#include "request/constraint_spec.h"

namespace di::recipe {

// nullopt when nothing is to be enforced. Reads out.constraint and out.parser (its tools and
// control token ids). An error names the tool whose parameters the layout cannot enforce.
Result<std::optional<di::request::ConstraintSpec>> engine_constraint(const Prepared& out, Encoding encoding);

}  // namespace di::recipe
