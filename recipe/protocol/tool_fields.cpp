// Tool validation rules common to the three APIs (names as OpenAI restricts them, schemas that
// describe an object).
#include "recipe/protocol/tool_fields.h"

#include <set>

namespace di::recipe {

bool valid_tool_name(const std::string& name, bool allow_namespace) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || (allow_namespace && (c == ':' || c == '.'));
    if (!ok) return false;
  }
  return true;
}

Result<ToolDefinition> read_function_tool(const Fields& f, const char* schema_key,
                                          bool schema_required) {
  ToolDefinition t;
  DI_ASSIGN_OR_RETURN(t.name, f.required_str("name"));
  if (!valid_tool_name(t.name))
    return f.error("name", "expected 1 to 128 characters of a-z, A-Z, 0-9, '_' or '-', got \"" +
                               t.name + "\"");
  DI_ASSIGN_OR_RETURN(t.description, f.str("description"));
  DI_ASSIGN_OR_RETURN(const ordered_json* params, f.object(schema_key));
  if (params == nullptr) {
    if (schema_required) return f.error(schema_key, "required, expected a JSON Schema object");
  } else {
    auto type = params->find("type");
    if (type != params->end() && !(type->is_string() && type->get<std::string>() == "object"))
      return f.error(schema_key, "expected a JSON Schema with \"type\": \"object\", got type " +
                                     type->dump());
    t.parameters = *params;
    t.has_parameters = true;
  }
  DI_ASSIGN_OR_RETURN(t.strict, f.boolean("strict"));
  return t;
}

Status check_unique_tool_names(const Fields& top, const std::string& param,
                               const std::vector<ToolDefinition>& tools) {
  std::set<std::string> seen;
  for (const auto& t : tools) {
    if (!seen.insert(t.name).second)
      return top.error_at(param, "tool names must be unique, \"" + t.name + "\" appears twice");
  }
  return Status::ok();
}

bool mentions_json(const std::string& text) {
  for (size_t i = 0; i + 4 <= text.size(); ++i) {
    if ((text[i] | 0x20) == 'j' && (text[i + 1] | 0x20) == 's' && (text[i + 2] | 0x20) == 'o' &&
        (text[i + 3] | 0x20) == 'n')
      return true;
  }
  return false;
}

}  // namespace di::recipe
