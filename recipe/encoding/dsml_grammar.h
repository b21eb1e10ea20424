// The whole of a DeepSeek reply as a generic grammar for the engine: optional free reasoning
// closed by the `</think>` control token, then the answer (free text, any JSON object, or JSON
// valid against a schema) and/or one DSML tool-call block whose invokes name declared tools and,
// for strict tools, whose parameters follow the tool's JSON Schema. Written as EBNF with the
// schemas embedded (%json / %raw_string) and the control tokens demanded by id (<[id]>), so the
// engine compiles it knowing nothing of DSML (request/constraint_spec.h, engine/constrain/ebnf_compiler.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/encoding/dsml.h"
#include "request/constraint_spec.h"

namespace di::recipe {

struct DsmlGrammarTool {
  std::string name;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();  // JSON Schema
  bool strict = false;
};

struct DsmlReplySpec {
  bool reasoning = false;  // the output opens with reasoning, closed by </think>
  enum class Content { kText, kJsonObject, kJsonSchema } content = Content::kText;
  nlohmann::ordered_json schema;  // kJsonSchema
  bool schema_strict = false;     // kJsonSchema: OpenAI strict (no undeclared keys)
  // kRequired: the prompt already opened the block, so the output starts inside it.
  enum class ToolCalls { kNone, kAuto, kRequired } tool_calls = ToolCalls::kNone;
  std::vector<DsmlGrammarTool> tools;
  bool parallel = true;  // false: the block holds exactly one call
  DsmlTags tags;
  // Token ids of `</think>` and `｜DSML｜`; -1 = not one token, spelled as text then (as the output
  // parser then recognises them by their text).
  int32_t think_end_id = -1;
  int32_t dsml_id = -1;
  // Whitespace policy of every JSON value in the reply (`strict` is set per use).
  di::request::JsonSchemaOptions json;
};

// The reply grammar as a kEbnf ConstraintSpec. A strict tool's parameters must be an object
// schema (a top-level local $ref is followed); each property becomes one DSML parameter in
// `properties` order (required ones mandatory), written string="true" with the raw text when the
// property's schema admits a plain string, or string="false" with JSON. Errors name the tool
// (`tools[i].parameters`).
Result<di::request::ConstraintSpec> dsml_reply_grammar(const DsmlReplySpec& spec);

}  // namespace di::recipe
