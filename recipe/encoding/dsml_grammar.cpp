// dsml_reply_grammar: the recipe-spec §3.1 layout as EBNF —
// block := "<DSML{B}>\n" invoke ("\n" invoke)* "\n</DSML{B}>", invoke := "<DSML{I} name=\"N\">\n"
// params joined by "\n" "\n</DSML{I}>", param := "<DSML{P} name=\"K\" string=\"true|false\">V</DSML{P}>".
#include "recipe/encoding/dsml_grammar.h"

#include <algorithm>
#include <cstdio>

#include "recipe/encoding/tokens.h"

namespace di::recipe {
namespace {

using ojson = nlohmann::ordered_json;
using di::request::ConstraintKind;
using di::request::ConstraintSpec;
using di::request::EmbeddedSchema;

// An EBNF string literal holding exactly `s`.
std::string lit(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// A JSON Pointer reference token (RFC 6901) inside a URI fragment (the engine resolves "#" +
// pointer as a $ref, percent-decoding it).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else if (c == '%') out += "%25";
    else out += c;
  }
  return out;
}

Status bad(const std::string& where, const std::string& what) { return Status::invalid_argument(where + ": " + what); }

class ReplyGrammarWriter {
 public:
  explicit ReplyGrammarWriter(const DsmlReplySpec& spec) : spec_(spec) {
    dsml_ = token(spec.dsml_id, tokens::kDsml);
  }

  Result<ConstraintSpec> write() {
    std::string body;
    using TC = DsmlReplySpec::ToolCalls;
    if (spec_.tool_calls == TC::kRequired) {
      DI_ASSIGN_OR_RETURN(body, invokes_and_close());
    } else {
      const std::string content = content_expr();
      if (spec_.tool_calls == TC::kNone) {
        body = content;
      } else {
        DI_ASSIGN_OR_RETURN(std::string calls, invokes_and_close());
        rules_ += "block ::= " + open(spec_.tags.block) + " " + lit(">\n") + " " + calls + "\n";
        // Free text already spans the newlines before the block; JSON gets up to two.
        if (spec_.content == DsmlReplySpec::Content::kText) {
          body = content + " block?";
        } else {
          body = "(" + content + " (" + lit("\n") + "{0,2} block)? | " + lead() + " block)";
        }
      }
    }
    const std::string think = spec_.reasoning ? ".* " + token(spec_.think_end_id, tokens::kThinkEnd) + " " : "";
    ConstraintSpec out;
    out.kind = ConstraintKind::kEbnf;
    out.source = "root ::= " + think + body + "\n" + rules_;
    out.schemas = std::move(schemas_);
    out.json = spec_.json;
    return out;
  }

 private:
  // A control token by id, or its text where it is not one token.
  static std::string token(int32_t id, std::string_view text) {
    return id >= 0 ? "<[" + std::to_string(id) + "]>" : lit(text);
  }
  std::string open(const std::string& tag) const { return lit("<") + " " + dsml_ + " " + lit(tag); }
  std::string close(const std::string& tag) const { return lit("</") + " " + dsml_ + " " + lit(tag + ">"); }
  // Whitespace a JSON answer may start with (after </think> models write a newline or two).
  static std::string lead() { return "[ \\n]{0,4}"; }

  // %json(i) over a new embedded schema.
  size_t embed(const ojson& schema, bool strict) {
    EmbeddedSchema e;
    e.source = schema.dump();
    e.json = spec_.json;
    e.json.strict = strict;
    schemas_.push_back(std::move(e));
    return schemas_.size() - 1;
  }

  std::string content_expr() {
    switch (spec_.content) {
      case DsmlReplySpec::Content::kText: return ".*";
      case DsmlReplySpec::Content::kJsonObject:
        return lead() + " %json(" + std::to_string(embed({{"type", "object"}}, false)) + ")";
      case DsmlReplySpec::Content::kJsonSchema:
        return lead() + " %json(" + std::to_string(embed(spec_.schema, spec_.schema_strict)) + ")";
    }
    return ".*";
  }

  // invoke ("\n" invoke)* "\n" "</DSML{B}>" (one invoke when not parallel): what follows the
  // block opener.
  Result<std::string> invokes_and_close() {
    if (spec_.tools.empty()) return bad("tools", "tool calls need at least one tool");
    std::string invoke;
    for (size_t i = 0; i < spec_.tools.size(); ++i) {
      const std::string where = "tools[" + std::to_string(i) + "]";
      const DsmlGrammarTool& t = spec_.tools[i];
      if (t.name.empty()) return bad(where + ".name", "expected a non-empty string");
      if (t.name.find('"') != std::string::npos) return bad(where + ".name", "must not contain '\"'");
      std::string params;
      if (t.strict) {
        DI_ASSIGN_OR_RETURN(params, strict_params(t.parameters, i, where));
      } else {
        params = free_params();
      }
      invoke += std::string(i ? "\n  | " : "") + open(spec_.tags.invoke) + " " + lit(" name=\"" + t.name + "\">\n") +
                " " + params + " " + lit("\n") + " " + close(spec_.tags.invoke);
    }
    rules_ += "invoke ::= " + invoke + "\n";
    const std::string tail = lit("\n") + " " + close(spec_.tags.block);
    // parallel false (the request's parallel_tool_calls): the block holds exactly one call.
    if (!spec_.parallel) return "invoke " + tail;
    return "invoke (" + lit("\n") + " invoke)* " + tail;
  }

  std::string param_open(const std::string& key) const {
    return open(spec_.tags.parameter) + " " + lit(" name=\"") + " " + key + " " + lit("\" string=\"");
  }

  // A non-strict tool: any keys; raw text, or any JSON value with string="false".
  std::string free_params() {
    if (!free_param_defined_) {
      const std::string any = std::to_string(embed(true, false));
      rules_ += "free_param ::= " + param_open("[^\"]*") + " (" + lit("true\">") + " .* | " + lit("false\">") +
                " %json(" + any + ")) " + close(spec_.tags.parameter) + "\n";
      free_param_defined_ = true;
    }
    return "(free_param (" + lit("\n") + " free_param)*)?";
  }

  // The parameters schema with a top-level local $ref followed, and the JSON Pointer it sits at.
  Result<std::pair<ojson, std::string>> resolve_root(const ojson& root, const std::string& where) {
    ojson cur = root;
    std::string pointer;
    for (int hops = 0; cur.is_object() && cur.contains("$ref"); ++hops) {
      if (hops > 16) return Status::limit(where + ": $ref chain longer than 16");
      for (auto it = cur.begin(); it != cur.end(); ++it) {
        static const char* kBeside[] = {"$ref", "$defs", "definitions", "$schema", "$id", "$comment", "title", "description"};
        if (std::find_if(std::begin(kBeside), std::end(kBeside), [&](const char* k) { return it.key() == k; }) ==
            std::end(kBeside))
          return Status::unsupported(where + ": keyword '" + it.key() +
                                     "' beside a $ref is not supported at the top of a strict tool's parameters");
      }
      const ojson& ref = cur["$ref"];
      if (!ref.is_string() || ref.get<std::string>().rfind("#", 0) != 0)
        return Status::unsupported(where + ": only a local $ref (\"#/...\") is supported at the top of a strict tool's parameters");
      const std::string target = ref.get<std::string>().substr(1);
      if (!target.empty() && target[0] != '/') return Status::unsupported(where + ": $ref '" + ref.get<std::string>() + "' is not a JSON Pointer");
      ojson::json_pointer p;
      try {
        p = ojson::json_pointer(target);
      } catch (const std::exception&) {
        return bad(where, "$ref '" + ref.get<std::string>() + "' is not a valid JSON Pointer");
      }
      if (!root.contains(p)) return bad(where, "$ref '" + ref.get<std::string>() + "' points at nothing");
      cur = root.at(p);
      pointer = target;
    }
    return std::make_pair(std::move(cur), std::move(pointer));
  }

  Result<std::string> strict_params(const ojson& root, size_t tool, const std::string& tool_where) {
    const std::string where = tool_where + ".parameters";
    DI_ASSIGN_OR_RETURN(auto resolved, resolve_root(root, where));
    const ojson& s = resolved.first;
    const std::string& base = resolved.second;
    if (!s.is_object()) return bad(where, "a strict tool needs an object schema");
    if (s.contains("type") && s["type"] != "object")
      return bad(where, "a strict tool's parameters must be of type object, got " + s["type"].dump());
    for (const char* k : {"anyOf", "oneOf", "allOf", "patternProperties", "minProperties", "maxProperties"}) {
      if (s.contains(k))
        return Status::unsupported(where + ": keyword '" + std::string(k) +
                                   "' is not supported at the top of a strict tool's parameters");
    }
    const ojson props = s.contains("properties") ? s["properties"] : ojson::object();
    if (!props.is_object()) return bad(where + ".properties", "expected an object");
    std::vector<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) return bad(where + ".required", "expected an array");
      for (const ojson& k : s["required"]) {
        if (!k.is_string()) return bad(where + ".required", "expected strings");
        if (!props.contains(k.get<std::string>()))
          return bad(where + ".required", "\"" + k.get<std::string>() + "\" is not among the properties");
        required.push_back(k.get<std::string>());
      }
    }
    const std::string schema = std::to_string(embed(root, true));
    struct Member {
      std::string expr;
      bool required;
    };
    std::vector<Member> members;
    const std::string& p = spec_.tags.parameter;
    for (auto it = props.begin(); it != props.end(); ++it) {
      const std::string& key = it.key();
      if (key.find('"') != std::string::npos) return bad(where + ".properties", "key '" + key + "' contains '\"'");
      const bool req = std::find(required.begin(), required.end(), key) != required.end();
      if (it.value().is_boolean() && !it.value().get<bool>()) {
        if (req) return bad(where, "required property \"" + key + "\" has schema false");
        continue;
      }
      const std::string at = lit(base + "/properties/" + pointer_token(key));
      const std::string value = "(" + lit("true\">") + " %raw_string(" + schema + ", " + at + ") | " + lit("false\">") +
                                " %json(" + schema + ", " + at + "))";
      members.push_back({param_open(lit(key)) + " " + value + " " + close(p), req});
    }
    // rest[i]: members i.. each preceded by "\n" (the first present one has none).
    const size_t n = members.size();
    auto rest = [&](size_t i) { return "tool" + std::to_string(tool) + "_params" + std::to_string(i); };
    rules_ += rest(n) + " ::= \"\"\n";
    for (size_t i = n; i-- > 0;) {
      const std::string one = "(" + lit("\n") + " " + members[i].expr + ")";
      rules_ += rest(i) + " ::= " + one + (members[i].required ? "" : "?") + " " + rest(i + 1) + "\n";
    }
    std::string first;
    bool any_required = false;
    for (size_t i = 0; i < n && !any_required; ++i) {
      first += (i ? " | " : "") + members[i].expr + " " + rest(i + 1);
      any_required = members[i].required;
    }
    if (!any_required) first += n ? " | \"\"" : "\"\"";
    return "(" + first + ")";
  }

  const DsmlReplySpec& spec_;
  std::string dsml_;
  std::string rules_;  // every rule but root, one per line
  std::vector<EmbeddedSchema> schemas_;
  bool free_param_defined_ = false;
};

}  // namespace

Result<ConstraintSpec> dsml_reply_grammar(const DsmlReplySpec& spec) { return ReplyGrammarWriter(spec).write(); }

}  // namespace di::recipe
