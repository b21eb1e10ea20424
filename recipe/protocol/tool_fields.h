// Function-tool validation shared by the request parsers: names, parameter schemas, unique
// names, and tool-call/tool-result pairing in a normalized message list.
#pragma once

#include <string>
#include <vector>

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

// Name: 1..128 characters of [A-Za-z0-9_-] (plus ':' and '.' when `allow_namespace`).
bool valid_tool_name(const std::string& name, bool allow_namespace = false);

// Reads a function definition {name, description?, parameters?, strict?} from `f`, where the
// schema key is `schema_key` ("parameters" for OpenAI, "input_schema" for Anthropic).
Result<ToolDefinition> read_function_tool(const Fields& f, const char* schema_key,
                                          bool schema_required);

// Fails when two tools share a name; `param` names the tools array.
Status check_unique_tool_names(const Fields& top, const std::string& param,
                               const std::vector<ToolDefinition>& tools);

// True when `text` contains "json" in any ASCII case.
bool mentions_json(const std::string& text);

}  // namespace di::recipe
