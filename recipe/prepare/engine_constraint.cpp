// engine_constraint: see engine_constraint.h. The spec is the EBNF reply grammar of
// recipe/encoding/dsml_grammar.h.
#include "recipe/prepare/engine_constraint.h"

#include <nlohmann/json.hpp>

#include "recipe/encoding/dsml.h"
#include "recipe/encoding/dsml_grammar.h"

namespace di::recipe {

using di::request::ConstraintSpec;
using di::request::JsonWhitespace;

Result<std::optional<ConstraintSpec>> engine_constraint(const Prepared& out, Encoding encoding) {
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
  if (oc.kind == OutputConstraint::Kind::kNone && !tools_constrained) return std::optional<ConstraintSpec>();

  DsmlReplySpec spec;
  spec.reasoning = po.prompt_opened_thinking && !opened_calls;
  switch (oc.kind) {
    case OutputConstraint::Kind::kJsonObject: spec.content = DsmlReplySpec::Content::kJsonObject; break;
    case OutputConstraint::Kind::kJsonSchema:
      spec.content = DsmlReplySpec::Content::kJsonSchema;
      spec.schema = oc.schema;
      spec.schema_strict = oc.strict;
      break;
    case OutputConstraint::Kind::kNone: spec.content = DsmlReplySpec::Content::kText; break;
  }
  using TC = DsmlReplySpec::ToolCalls;
  spec.tool_calls = !dsml_tools ? TC::kNone : opened_calls ? TC::kRequired : TC::kAuto;
  if (dsml_tools) {
    for (const ToolSpec& t : po.tools)
      spec.tools.push_back({t.name, ojson::parse(t.parameters.dump()), t.type == "function" && t.strict});
    spec.parallel = po.parallel_tool_calls;
    spec.tags = encoding == Encoding::kDsv32 ? dsml_tags_v32() : dsml_tags_v4(encoding == Encoding::kDsv41);
  }
  spec.think_end_id = po.control_tokens.think_end;
  spec.dsml_id = po.control_tokens.dsml;
  // Small whitespace runs: the model writes JSON compactly or pretty-printed, never pages of blanks.
  spec.json.whitespace = JsonWhitespace::kFlexible;
  spec.json.max_whitespace = 16;
  DI_ASSIGN_OR_RETURN(ConstraintSpec s, dsml_reply_grammar(spec));
  return std::optional<ConstraintSpec>(std::move(s));
}

}  // namespace di::recipe
