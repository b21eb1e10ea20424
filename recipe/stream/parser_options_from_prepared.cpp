// Maps Prepared::parsing and the conversation's tools onto ParserOptions.
#include "recipe/stream/parser_options_from_prepared.h"

namespace di::recipe {

ParserOptions parser_options_from_prepared(const Prepared& p) {
  ParserOptions o;
  o.protocol = p.protocol;
  o.encoding = p.encoding == "dsv4" ? EncodingVersion::kDsv4 : EncodingVersion::kDsv41;
  o.prompt_opened_thinking = p.parsing.reasoning_initial_stage;
  o.thinking = p.conversation.thinking;
  o.parse_tool_calls = p.parsing.parse_tool_calls;
  o.prompt_opened_tool_calls = p.parsing.tool_call_initial_stage;
  for (const ToolDefinition& t : p.conversation.tools) {
    ToolSpec s;
    s.name = t.name;
    s.parameters = nlohmann::json::parse(t.parameters.dump());
    s.strict = t.strict.value_or(false);
    s.type = t.custom ? "custom" : "function";
    o.tools.push_back(std::move(s));
  }
  o.json_object = p.parsing.parse_json_output;
  o.stop_sequences = p.parsing.stop_sequences;
  o.stream = p.stream;
  o.include_usage = p.parsing.include_usage;
  o.model = p.model.empty() ? p.requested_model : p.model;
  return o;
}

}  // namespace di::recipe
