// DSML prompt text and historical tool-call rendering. The instruction texts are the prompt
// strings DeepSeek's models were trained on (facts, reproduced byte for byte).
#include "recipe/encoding/dsml.h"

#include "recipe/encoding/json_text.h"
#include "recipe/encoding/py_json.h"
#include "recipe/encoding/tokens.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string dsml_open(const std::string& tag) { return "<" + std::string(tokens::kDsml) + tag; }
std::string dsml_close(const std::string& tag) {
  return "</" + std::string(tokens::kDsml) + tag + ">";
}

// The tool prompts' example block: two invokes named `$<NAME>` and `$<NAME>2`, from the block
// opener to its close (no newline after). Byte-exact prompt text.
std::string example_block(const DsmlTags& t, const std::string& name) {
  const std::string B = dsml_open(t.block) + ">";
  const std::string I = dsml_open(t.invoke);
  const std::string P = dsml_open(t.parameter);
  return B + "\n" +
         I + " name=\"$" + name + "\">\n" +
         P + " name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE" + dsml_close(t.parameter) + "\n"
         "...\n" +
         dsml_close(t.invoke) + "\n" +
         I + " name=\"$" + name + "2\">\n"
         "...\n" +
         dsml_close(t.invoke) + "\n" +
         dsml_close(t.block);
}

}  // namespace

DsmlTags dsml_tags_v32() { return {"function_calls", "invoke", "parameter"}; }
DsmlTags dsml_tags_v4(bool v41) {
  return v41 ? DsmlTags{" calls", " invoke", " parameter"}
             : DsmlTags{"tool_calls", "invoke", "parameter"};
}

void append_tool_prompt_v4(RenderedPrompt& out, const DsmlTags& t, const ordered_json& functions) {
  const std::string B = dsml_open(t.block) + ">";
  out.tmpl(
      "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can "
      "invoke tools by writing a \"" + B + "\" block like the following:\n\n" +
      example_block(t, "TOOL_NAME") + "\n\n"
      "String parameters should be specified as is and set `string=\"true\"`. For all other types "
      "(numbers, booleans, arrays, objects), pass the value in JSON format and set "
      "`string=\"false\"`.\n\n"
      "If thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning "
      "inside <think>...</think> BEFORE any tool calls or final response.\n\n"
      "Otherwise, output directly after </think> with tool calls or final response.\n\n"
      "### Available Tool Schemas\n\n");
  bool first = true;
  for (const auto& f : functions) {
    if (!first) out.tmpl("\n");
    first = false;
    out.text(py_json_dumps(f));
  }
  out.tmpl(
      "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke "
      "tool calls.\n");
}

void append_tool_prompt_v32(RenderedPrompt& out, const ordered_json& functions) {
  const DsmlTags t = dsml_tags_v32();
  const std::string B = dsml_open(t.block) + ">";
  out.tmpl(
      "## Tools\nYou have access to a set of tools you can use to answer the user's question.\n"
      "You can invoke functions by writing a \"" + B + "\" block like the following as part of "
      "your reply to the user:\n" +
      example_block(t, "FUNCTION_NAME") + "\n"
      "String and scalar parameters should be specified as is without any escaping or quotes, "
      "while lists and objects should use JSON format. The \"string\" attribute should be set to "
      "\"true\" for string type parameters and \"false\" for other types (numbers, booleans, "
      "arrays, objects).\n"
      "If the thinking_mode is enabled, then after function results you should strongly consider "
      "outputting a thinking block. Here is an example:\n" +
      B + "\n...\n" + dsml_close(t.block) + "\n"
      "<function_results>\n...\n</function_results>\n"
      "<think>...thinking about results</think>\n"
      "Here are the functions available in JSONSchema format:\n<functions>\n");
  for (const auto& f : functions) {
    out.text(py_json_dumps(f));
    out.tmpl("\n");
  }
  out.tmpl("</functions>\n");
}

Result<ordered_json> functions_from_tools(const ordered_json& tools) {
  if (!tools.is_array()) return Status::invalid_argument("TypeError: tools must be a list");
  ordered_json out = ordered_json::array();
  for (const auto& t : tools) {
    if (!t.is_object() || !t.contains("function"))
      return Status::invalid_argument("KeyError: 'function'");
    out.push_back(t["function"]);
  }
  return out;
}

Status append_tool_calls(RenderedPrompt& out, const DsmlTags& t, const ordered_json& tool_calls) {
  out.tmpl(dsml_open(t.block) + ">\n");
  bool first_call = true;
  for (const auto& call : tool_calls) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
      return Status::invalid_argument("KeyError: 'function'");
    const ordered_json& fn = call["function"];
    if (!fn.contains("name")) return Status::invalid_argument("KeyError: 'name'");
    if (!fn.contains("arguments")) return Status::invalid_argument("KeyError: 'arguments'");
    ordered_json args;
    const ordered_json& raw = fn["arguments"];
    if (raw.is_string()) {
      // The string is client text: parse it with the body's nesting bound, or py_json_dumps
      // below would recurse as deep as the client nests.
      JsonTextResult parsed = parse_json_text(raw.get_ref<const std::string&>(), kMaxArgumentsDepth);
      if (parsed.error == JsonTextResult::Error::kTooDeep)
        return Status::invalid_argument("ValueError: tool call arguments nest deeper than " +
                                        std::to_string(kMaxArgumentsDepth) + " levels");
      if (parsed.error != JsonTextResult::Error::kNone)
        return Status::invalid_argument("ValueError: tool call arguments are not valid JSON: " +
                                        raw.get<std::string>());
      args = std::move(parsed.value);
    } else {
      args = raw;
    }
    if (!args.is_object())
      return Status::invalid_argument("ValueError: tool call arguments must be a JSON object, got " +
                                      py_json_dumps(raw));
    if (!first_call) out.tmpl("\n");
    first_call = false;
    const std::string name = fn["name"].is_string() ? fn["name"].get<std::string>()
                                                    : py_json_dumps(fn["name"]);
    out.tmpl(dsml_open(t.invoke) + " name=\"");
    out.text(name);
    out.tmpl("\">\n");
    bool first_param = true;
    for (const auto& [k, v] : args.items()) {
      if (!first_param) out.tmpl("\n");
      first_param = false;
      out.tmpl(dsml_open(t.parameter) + " name=\"");
      out.text(k);
      out.tmpl(v.is_string() ? "\" string=\"true\">" : "\" string=\"false\">");
      out.text(v.is_string() ? v.get_ref<const std::string&>() : py_json_dumps(v));
      out.tmpl(dsml_close(t.parameter));
    }
    out.tmpl("\n" + dsml_close(t.invoke));
  }
  out.tmpl("\n" + dsml_close(t.block));
  return Status::ok();
}

}  // namespace di::recipe
