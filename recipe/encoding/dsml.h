// DSML: DeepSeek's markup for tool calls in prompts — the tool-use instructions placed in the
// system prompt and the rendering of historical calls. Tag names differ per version (V3.2
// function_calls, V4 tool_calls, V4.1 " calls"); parsing model output is recipe/stream's job.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/encoding/prompt.h"

namespace di::recipe {

struct DsmlTags {
  std::string block;      // "function_calls" | "tool_calls" | " calls"
  std::string invoke;     // "invoke" | " invoke"
  std::string parameter;  // "parameter" | " parameter"
};

DsmlTags dsml_tags_v32();
DsmlTags dsml_tags_v4(bool v41);

// The V4 / V4.1 "## Tools" system-prompt section for the given schema lines (ends with "\n").
void append_tool_prompt_v4(RenderedPrompt& out, const DsmlTags& tags,
                           const nlohmann::ordered_json& functions);
// The V3.2 "## Tools" section.
void append_tool_prompt_v32(RenderedPrompt& out, const nlohmann::ordered_json& functions);

// OpenAI-format tools [{"type":"function","function":{...}}] → the function objects.
Result<nlohmann::ordered_json> functions_from_tools(const nlohmann::ordered_json& tools);

// "<｜DSML｜{block}>\n" + invokes + "\n</｜DSML｜{block}>" for OpenAI-format tool calls
// ({"function": {"name", "arguments"}}, arguments a JSON object text or an object). String
// values are inserted verbatim (string="true"), others as Python-style JSON.
Status append_tool_calls(RenderedPrompt& out, const DsmlTags& tags,
                         const nlohmann::ordered_json& tool_calls);

}  // namespace di::recipe
