// ChatOutputGrammar: the whole of a chat model's reply as one grammar — optional free reasoning
// closed by the `</think>` control token, then the answer (free text, any JSON object, or JSON
// valid against a schema) and/or one DSML tool-call block whose invokes name declared tools and,
// for strict tools, whose parameters follow the tool's JSON Schema. The markup's tag names come
// from the caller (they differ per prompt format); this file owns the block's layout only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/constrain/grammar.h"
#include "engine/constrain/json_schema_compiler.h"

namespace di::engine::constrain {

// The spec as JSON (the form ConstraintKind::kChatOutput carries, so it caches by its text):
//   {"reasoning": bool,                         output opens with reasoning, then </think>
//    "content": {"type": "text"} | {"type": "json_object"} |
//               {"type": "json_schema", "schema": {...}, "strict": bool},
//    "tool_calls": "none" | "auto" | "required",  required: the prompt already opened the block
//    "tools": [{"name": str, "parameters": schema, "strict": bool}],
//    "parallel": bool,                        default true; false: the block holds one call
//    "markup": {"block": str, "invoke": str, "parameter": str}}   e.g. " calls", " invoke", ...
// A strict tool's parameters must be an object schema; each property becomes one DSML
// parameter in `properties` order (required ones mandatory), written string="true" with the raw
// text when the property's schema admits a plain string, or string="false" with JSON.
Result<std::shared_ptr<const Grammar>> compile_chat_output(const nlohmann::ordered_json& spec,
                                                           const JsonSchemaOptions& json = {},
                                                           const GrammarLimits& limits = {});
Result<std::shared_ptr<const Grammar>> compile_chat_output_text(std::string_view spec_text,
                                                                const JsonSchemaOptions& json = {},
                                                                const GrammarLimits& limits = {});

}  // namespace di::engine::constrain
