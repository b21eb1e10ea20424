// ParserOptions <-> JSON. Validates types and names the offending key; knows nothing of parsing.
#include "recipe/stream/parser_options.h"

#include <set>

#include "base/enum_names.h"

namespace di::recipe {
namespace {

using nlohmann::json;

constexpr EnumName<ToolCallFormat> kToolCallFormatNames[] = {{ToolCallFormat::kDsml, "dsml"},
                                                             {ToolCallFormat::kHermes, "hermes"},
                                                             {ToolCallFormat::kLlama3Json, "llama3_json"},
                                                             {ToolCallFormat::kNone, "none"}};

std::string type_name(const json& v) { return v.type_name(); }

Status expect(const json& v, bool ok, const std::string& key, const char* what) {
  if (ok) return Status::ok();
  return Status::invalid_argument(key + ": expected " + what + ", got " + type_name(v));
}

Status read_bool(const json& j, const char* key, bool* out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::ok();
  DI_RETURN_IF_ERROR(expect(*it, it->is_boolean(), key, "a boolean"));
  *out = it->get<bool>();
  return Status::ok();
}

Status read_string(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  DI_RETURN_IF_ERROR(expect(*it, it->is_string(), key, "a string"));
  *out = it->get<std::string>();
  return Status::ok();
}

Status read_token_id(const json& j, const char* key, int32_t* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  const std::string where = std::string("control_tokens.") + key;
  if (!it->is_number_integer() || it->get<int64_t>() < -1 || it->get<int64_t>() > INT32_MAX)
    return Status::invalid_argument(where + ": expected a token id (integer >= 0, or -1), got " +
                                    it->dump());
  *out = static_cast<int32_t>(it->get<int64_t>());
  return Status::ok();
}

Result<ToolSpec> tool_from_json(const json& t, size_t i) {
  const std::string where = "tools[" + std::to_string(i) + "]";
  if (!t.is_object())
    return Status::invalid_argument(where + ": expected an object, got " + type_name(t));
  ToolSpec tool;
  auto name = t.find("name");
  if (name == t.end() || !name->is_string() || name->get<std::string>().empty())
    return Status::invalid_argument(where + ".name: expected a non-empty string");
  tool.name = name->get<std::string>();
  if (auto p = t.find("parameters"); p != t.end() && !p->is_null()) {
    if (!p->is_object())
      return Status::invalid_argument(where + ".parameters: expected an object, got " +
                                      type_name(*p));
    tool.parameters = *p;
  }
  if (auto s = t.find("strict"); s != t.end() && !s->is_null()) {
    if (!s->is_boolean())
      return Status::invalid_argument(where + ".strict: expected a boolean, got " + type_name(*s));
    tool.strict = s->get<bool>();
  }
  if (auto ty = t.find("type"); ty != t.end()) {
    if (!ty->is_string() || (*ty != "function" && *ty != "custom"))
      return Status::invalid_argument(where + ".type: expected \"function\" or \"custom\", got " +
                                      ty->dump());
    tool.type = ty->get<std::string>();
  }
  return tool;
}

}  // namespace

const char* tool_call_format_name(ToolCallFormat f) {
  // The table's names are literals, so the view's data is NUL-terminated.
  return name_of(kToolCallFormatNames, f, "dsml").data();
}

Result<ParserOptions> parser_options_from_json(const json& j) {
  if (!j.is_object())
    return Status::invalid_argument("parser options: expected a JSON object, got " + type_name(j));
  static const std::set<std::string> kKeys = {
      "protocol", "encoding", "prompt_opened_thinking", "thinking", "parse_tool_calls",
      "prompt_opened_tool_calls", "parallel_tool_calls", "tool_format", "tools", "json_object", "stop", "stream", "include_usage",
      "model", "request_id", "created", "system_fingerprint", "control_tokens"};
  for (const auto& [key, _] : j.items())
    if (!kKeys.count(key)) return Status::invalid_argument(key + ": unknown parser option");

  ParserOptions o;
  if (auto it = j.find("protocol"); it != j.end()) {
    DI_RETURN_IF_ERROR(expect(*it, it->is_string(), "protocol", "a string"));
    DI_ASSIGN_OR_RETURN(o.protocol, parse_protocol(it->get<std::string>()));
  }
  if (auto it = j.find("encoding"); it != j.end()) {
    if (*it == "dsv4") o.encoding = EncodingVersion::kDsv4;
    else if (*it == "dsv41") o.encoding = EncodingVersion::kDsv41;
    else return Status::invalid_argument("encoding: expected \"dsv4\" or \"dsv41\", got " + it->dump());
  }
  DI_RETURN_IF_ERROR(read_bool(j, "prompt_opened_thinking", &o.prompt_opened_thinking));
  o.thinking = o.prompt_opened_thinking;
  DI_RETURN_IF_ERROR(read_bool(j, "thinking", &o.thinking));
  if (auto it = j.find("tool_format"); it != j.end() && !it->is_null()) {
    const std::optional<ToolCallFormat> f =
        it->is_string() ? value_named(kToolCallFormatNames, it->get<std::string>()) : std::nullopt;
    if (!f)
      return Status::invalid_argument("tool_format: expected " + quoted_names(kToolCallFormatNames) +
                                      ", got " + it->dump());
    o.tool_format = *f;
  }
  if (auto it = j.find("tools"); it != j.end() && !it->is_null()) {
    DI_RETURN_IF_ERROR(expect(*it, it->is_array(), "tools", "an array"));
    for (size_t i = 0; i < it->size(); ++i) {
      DI_ASSIGN_OR_RETURN(ToolSpec t, tool_from_json((*it)[i], i));
      o.tools.push_back(std::move(t));
    }
  }
  o.parse_tool_calls = !o.tools.empty();
  DI_RETURN_IF_ERROR(read_bool(j, "parse_tool_calls", &o.parse_tool_calls));
  DI_RETURN_IF_ERROR(read_bool(j, "prompt_opened_tool_calls", &o.prompt_opened_tool_calls));
  DI_RETURN_IF_ERROR(read_bool(j, "parallel_tool_calls", &o.parallel_tool_calls));
  DI_RETURN_IF_ERROR(read_bool(j, "json_object", &o.json_object));
  if (auto it = j.find("stop"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      o.stop_sequences.push_back(it->get<std::string>());
    } else {
      DI_RETURN_IF_ERROR(expect(*it, it->is_array(), "stop", "a string or an array of strings"));
      for (size_t i = 0; i < it->size(); ++i) {
        const json& s = (*it)[i];
        if (!s.is_string())
          return Status::invalid_argument("stop[" + std::to_string(i) + "]: expected a string, got " +
                                          type_name(s));
        o.stop_sequences.push_back(s.get<std::string>());
      }
    }
  }
  DI_RETURN_IF_ERROR(read_bool(j, "stream", &o.stream));
  DI_RETURN_IF_ERROR(read_bool(j, "include_usage", &o.include_usage));
  DI_RETURN_IF_ERROR(read_string(j, "model", &o.model));
  DI_RETURN_IF_ERROR(read_string(j, "request_id", &o.request_id));
  DI_RETURN_IF_ERROR(read_string(j, "system_fingerprint", &o.system_fingerprint));
  if (auto it = j.find("created"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0)
      return Status::invalid_argument("created: expected unix seconds (integer >= 0), got " +
                                      it->dump());
    o.created = it->get<int64_t>();
  }
  if (auto it = j.find("control_tokens"); it != j.end() && !it->is_null()) {
    DI_RETURN_IF_ERROR(expect(*it, it->is_object(), "control_tokens", "an object"));
    for (const auto& [key, _] : it->items())
      if (key != "think_start" && key != "think_end" && key != "dsml" && key != "eos")
        return Status::invalid_argument("control_tokens." + key + ": unknown control token");
    DI_RETURN_IF_ERROR(read_token_id(*it, "think_start", &o.control_tokens.think_start));
    DI_RETURN_IF_ERROR(read_token_id(*it, "think_end", &o.control_tokens.think_end));
    DI_RETURN_IF_ERROR(read_token_id(*it, "dsml", &o.control_tokens.dsml));
    DI_RETURN_IF_ERROR(read_token_id(*it, "eos", &o.control_tokens.eos));
  }
  return o;
}

json parser_options_to_json(const ParserOptions& o) {
  json tools = json::array();
  for (const ToolSpec& t : o.tools)
    tools.push_back({{"name", t.name}, {"parameters", t.parameters}, {"strict", t.strict},
                     {"type", t.type}});
  return {
      {"protocol", std::string(protocol_name(o.protocol))},
      {"encoding", o.encoding == EncodingVersion::kDsv4 ? "dsv4" : "dsv41"},
      {"prompt_opened_thinking", o.prompt_opened_thinking},
      {"thinking", o.thinking},
      {"parse_tool_calls", o.parse_tool_calls},
      {"prompt_opened_tool_calls", o.prompt_opened_tool_calls},
      {"parallel_tool_calls", o.parallel_tool_calls},
      {"tool_format", tool_call_format_name(o.tool_format)},
      {"tools", tools},
      {"json_object", o.json_object},
      {"stop", o.stop_sequences},
      {"stream", o.stream},
      {"include_usage", o.include_usage},
      {"model", o.model},
      {"request_id", o.request_id},
      {"created", o.created},
      {"system_fingerprint", o.system_fingerprint},
      {"control_tokens",
       {{"think_start", o.control_tokens.think_start},
        {"think_end", o.control_tokens.think_end},
        {"dsml", o.control_tokens.dsml},
        {"eos", o.control_tokens.eos}}},
  };
}

}  // namespace di::recipe
