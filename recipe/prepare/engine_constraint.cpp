// engine_constraint: see engine_constraint.h. The spec is a kChatOutput source, the JSON form the
// engine's chat output grammar reads (engine/constrain/chat_output_grammar.h).
#include "recipe/prepare/engine_constraint.h"

#include <nlohmann/json.hpp>

#include "recipe/encoding/dsml.h"

namespace di::recipe {

using di::request::ConstraintKind;
using di::request::ConstraintSpec;
using di::request::JsonWhitespace;

std::optional<ConstraintSpec> engine_constraint(const Prepared& out, Encoding encoding) {
  using ojson = nlohmann::ordered_json;
  const ParserOptions& po = out.parser;
  const OutputConstraint& oc = out.constraint;
  bool strict_tool = false;
  for (const ToolSpec& t : po.tools) strict_tool = strict_tool || t.strict;
  // The grammar knows DSML only: a templated model's calls (Hermes, Llama JSON) go unconstrained.
  const bool dsml_tools = po.parse_tool_calls && po.tool_format == ToolCallFormat::kDsml;
  const bool opened_calls = dsml_tools && po.prompt_opened_tool_calls;
  // Tools need the grammar when their arguments must follow a schema (strict), when the prompt
  // forced a call (unconstrained, a model may write anything inside the opened block and the
  // output would parse to nothing), and when only one call is allowed.
  const bool tools_constrained = dsml_tools && (strict_tool || opened_calls || !po.parallel_tool_calls);
  if (oc.kind == OutputConstraint::Kind::kNone && !tools_constrained) return std::nullopt;

  ojson spec = ojson::object();
  spec["reasoning"] = po.prompt_opened_thinking && !opened_calls;
  switch (oc.kind) {
    case OutputConstraint::Kind::kJsonObject: spec["content"] = {{"type", "json_object"}}; break;
    case OutputConstraint::Kind::kJsonSchema:
      spec["content"] = {{"type", "json_schema"}, {"schema", oc.schema}, {"strict", oc.strict}};
      break;
    case OutputConstraint::Kind::kNone: spec["content"] = {{"type", "text"}}; break;
  }
  spec["tool_calls"] = !dsml_tools ? "none" : opened_calls ? "required" : "auto";
  if (dsml_tools) {
    ojson list = ojson::array();
    for (const ToolSpec& t : po.tools)
      list.push_back({{"name", t.name},
                      {"parameters", ojson::parse(t.parameters.dump())},
                      {"strict", t.type == "function" && t.strict}});
    spec["tools"] = std::move(list);
    spec["parallel"] = po.parallel_tool_calls;
    const DsmlTags tags = encoding == Encoding::kDsv32 ? dsml_tags_v32() : dsml_tags_v4(encoding == Encoding::kDsv41);
    spec["markup"] = {{"block", tags.block}, {"invoke", tags.invoke}, {"parameter", tags.parameter}};
  }
  ConstraintSpec s;
  s.kind = ConstraintKind::kChatOutput;
  s.source = spec.dump();
  // Small whitespace runs: the model writes JSON compactly or pretty-printed, never pages of blanks.
  s.json.whitespace = JsonWhitespace::kFlexible;
  s.json.max_whitespace = 16;
  return s;
}

}  // namespace di::recipe
