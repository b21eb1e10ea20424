// Chat output grammar: reasoning, answer and the DSML block (recipe-spec §3.1 layout:
// block := "<DSML{B}>\n" invoke ("\n" invoke)* "\n</DSML{B}>", invoke := "<DSML{I} name=\"N\">\n"
// params joined by "\n" "\n</DSML{I}>", param := "<DSML{P} name=\"K\" string=\"true|false\">V</DSML{P}>").
#include "engine/constrain/chat_output_grammar.h"

#include <algorithm>
#include <functional>

#include "engine/constrain/char_class.h"
#include "engine/constrain/control_tokens.h"
#include "engine/constrain/json_schema_merge.h"
#include "engine/constrain/regex_compiler.h"

namespace di::engine::constrain {
namespace {

Status bad(const std::string& where, const std::string& what) {
  return Status::invalid_argument("chat_output: " + where + ": " + what);
}

class ChatGrammarBuilder {
 public:
  ChatGrammarBuilder(const ojson& spec, const JsonSchemaOptions& json, const GrammarLimits& limits)
      : spec_(spec), json_(json) {
    b_.set_limits(limits);
    text_char_ = CharClass::any().to_utf8();
    const ExprPtr dsml = literal(control_token_bytes(ControlToken::kDsml));
    open_ = [dsml](const std::string& tag) { return seq({literal("<"), dsml, literal(tag)}); };
    close_ = [dsml](const std::string& tag) { return seq({literal("</"), dsml, literal(tag), literal(">")}); };
  }

  Result<std::shared_ptr<const Grammar>> build() {
    if (!spec_.is_object()) return bad("spec", "expected an object");
    const bool reasoning = spec_.value("reasoning", false);
    const std::string mode = spec_.value("tool_calls", "none");
    if (mode != "none" && mode != "auto" && mode != "required")
      return bad("tool_calls", "expected \"none\", \"auto\" or \"required\", got \"" + mode + "\"");
    const uint32_t root = b_.declare("root");
    ExprPtr body;
    if (mode == "required") {
      DI_ASSIGN_OR_RETURN(ExprPtr calls, invokes_and_close());
      body = calls;
    } else {
      DI_ASSIGN_OR_RETURN(ExprPtr content, content_expr());
      const bool is_text = !spec_.contains("content") || spec_["content"].value("type", "text") == "text";
      if (mode == "none") {
        body = content;
      } else {
        DI_ASSIGN_OR_RETURN(ExprPtr calls, invokes_and_close());
        const std::string& b = markup("block");
        ExprPtr block = seq({open_(b), literal(">\n"), calls});
        // Free text already spans the newlines before the block; JSON gets up to two.
        ExprPtr gap = is_text ? empty() : repeat(literal("\n"), 0, 2);
        body = alt({seq({content, opt(seq({gap, block}))}), is_text ? nothing() : seq({lead(), block})});
      }
    }
    if (!status_.is_ok()) return status_;
    ExprPtr think = reasoning ? seq({star(text_char_), literal(control_token_bytes(ControlToken::kThinkEnd))}) : empty();
    b_.define(root, seq({think, body}));
    return b_.build(root);
  }

 private:
  const std::string& markup(const char* key) {
    static const std::string kEmpty;
    if (!spec_.contains("markup") || !spec_["markup"].is_object() || !spec_["markup"].contains(key) ||
        !spec_["markup"][key].is_string()) {
      if (status_.is_ok()) status_ = bad(std::string("markup.") + key, "expected a string");
      return kEmpty;
    }
    return spec_["markup"][key].get_ref<const std::string&>();
  }

  // Whitespace a JSON answer may start with (after </think> models write a newline or two).
  ExprPtr lead() const { return repeat(bytes({{' ', ' '}, {'\n', '\n'}}), 0, 4); }

  Result<ExprPtr> content_expr() {
    if (!spec_.contains("content")) return star(text_char_);
    const ojson& c = spec_["content"];
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string()) return bad("content", "expected {\"type\": ...}");
    const std::string type = c["type"].get<std::string>();
    if (type == "text") return star(text_char_);
    if (type == "json_object") {
      schemas_.push_back(std::make_unique<ojson>(ojson::object()));
      JsonSchemaRules& r = rules_for(*schemas_.back(), json_);
      return seq({lead(), rule_ref(r.any_object())});
    }
    if (type == "json_schema") {
      if (!c.contains("schema")) return bad("content.schema", "missing");
      JsonSchemaOptions o = json_;
      o.strict = c.value("strict", false);
      schemas_.push_back(std::make_unique<ojson>(c["schema"]));
      JsonSchemaRules& r = rules_for(*schemas_.back(), o);
      DI_ASSIGN_OR_RETURN(uint32_t rule, r.rule(*schemas_.back(), "#"));
      return seq({lead(), rule_ref(rule)});
    }
    return bad("content.type", "expected \"text\", \"json_object\" or \"json_schema\", got \"" + type + "\"");
  }

  JsonSchemaRules& rules_for(const ojson& root, const JsonSchemaOptions& o) {
    rules_.push_back(std::make_unique<JsonSchemaRules>(b_, root, o));
    return *rules_.back();
  }

  // invoke ("\n" invoke)* "\n" "</DSML{B}>" (one invoke when not parallel): what follows the
  // block opener.
  Result<ExprPtr> invokes_and_close() {
    if (!spec_.contains("tools") || !spec_["tools"].is_array() || spec_["tools"].empty())
      return bad("tools", "tool calls need at least one tool");
    const std::string& inv = markup("invoke");
    std::vector<ExprPtr> invokes;
    const ojson& tools = spec_["tools"];
    for (size_t i = 0; i < tools.size(); ++i) {
      const std::string where = "tools[" + std::to_string(i) + "]";
      const ojson& t = tools[i];
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty())
        return bad(where + ".name", "expected a non-empty string");
      const std::string name = t["name"].get<std::string>();
      if (name.find('"') != std::string::npos) return bad(where + ".name", "must not contain '\"'");
      ExprPtr params;
      if (t.value("strict", false)) {
        DI_ASSIGN_OR_RETURN(params, strict_params(t.contains("parameters") ? t["parameters"] : ojson::object(), where));
      } else {
        params = free_params();
      }
      invokes.push_back(seq({open_(inv), literal(" name=\"" + name + "\">\n"), params, literal("\n"), close_(inv)}));
    }
    const uint32_t invoke = b_.declare("invoke");
    b_.define(invoke, alt(std::move(invokes)));
    // parallel false (the request's parallel_tool_calls): the block holds exactly one call.
    if (!spec_.value("parallel", true)) return seq({rule_ref(invoke), literal("\n"), close_(markup("block"))});
    return seq({rule_ref(invoke), star(seq({literal("\n"), rule_ref(invoke)})), literal("\n"), close_(markup("block"))});
  }

  ExprPtr param_open(ExprPtr key) {
    return seq({open_(markup("parameter")), literal(" name=\""), std::move(key), literal("\" string=\"")});
  }

  // A non-strict tool: any keys; raw text, or any JSON value with string="false".
  ExprPtr free_params() {
    if (free_params_) return free_params_;
    schemas_.push_back(std::make_unique<ojson>(ojson::object()));
    JsonSchemaRules& r = rules_for(*schemas_.back(), json_);
    CharClass key_chars = CharClass::range('"', '"').complement();
    ExprPtr value = alt({seq({literal("true\">"), star(text_char_)}), seq({literal("false\">"), rule_ref(r.any_value())})});
    const uint32_t param = b_.declare("free_param");
    b_.define(param, seq({param_open(star(key_chars.to_utf8())), value, close_(markup("parameter"))}));
    free_params_ = opt(seq({rule_ref(param), star(seq({literal("\n"), rule_ref(param)}))}));
    return free_params_;
  }

  // The raw (string="true") spellings of the strings `s` admits, or nothing() when it admits
  // none we can spell raw (then only the JSON form remains).
  Result<ExprPtr> raw_string(JsonSchemaRules& r, const ojson& schema, const std::string& path, int depth) {
    if (depth > 8) return nothing();
    if (schema.is_boolean()) return schema.get<bool>() ? star(text_char_) : nothing();
    DI_ASSIGN_OR_RETURN(ojson s, r.resolve(schema, path));
    if (!s.is_object()) return nothing();
    if (s.contains("const") || s.contains("enum")) {
      ojson values = s.contains("const") ? ojson::array({s["const"]}) : s["enum"];
      std::vector<ExprPtr> alts;
      if (values.is_array())
        for (const ojson& v : values)
          if (v.is_string()) alts.push_back(literal(v.get<std::string>()));
      return alt(std::move(alts));
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key) || !s[key].is_array()) continue;
      for (auto it = s.begin(); it != s.end(); ++it)
        if (it.key() != key && is_assertion_keyword(it.key())) return nothing();  // siblings constrain branches
      std::vector<ExprPtr> alts;
      for (size_t i = 0; i < s[key].size(); ++i) {
        DI_ASSIGN_OR_RETURN(ExprPtr e, raw_string(r, s[key][i], path + "/" + key + "/" + std::to_string(i), depth + 1));
        alts.push_back(e);
      }
      return alt(std::move(alts));
    }
    if (s.contains("allOf") || s.contains("format")) return nothing();
    bool string_ok = !s.contains("type");
    if (s.contains("type")) {
      const ojson& t = s["type"];
      if (t.is_string()) string_ok = t == "string";
      if (t.is_array())
        for (const ojson& x : t) string_ok = string_ok || x == "string";
    }
    if (!string_ok) return nothing();
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string() || s.contains("minLength") || s.contains("maxLength")) return nothing();
      RegexOptions ro;
      ro.search = true;
      auto e = regex_to_expr(s["pattern"].get<std::string>(), ro);
      if (!e.is_ok()) return Status(e.status().code(), "chat_output: " + path + ": pattern: " + e.status().message());
      return *e;
    }
    auto count = [&](const char* k, uint32_t dflt) -> uint32_t {
      if (!s.contains(k) || !s[k].is_number_unsigned()) return dflt;
      return static_cast<uint32_t>(std::min<uint64_t>(s[k].get<uint64_t>(), UINT32_MAX - 1));
    };
    const uint32_t lo = count("minLength", 0), hi = count("maxLength", Expr::kUnbounded);
    if (lo == 0 && hi == Expr::kUnbounded) return star(text_char_);
    return repeat(text_char_, lo, hi);
  }

  Result<ExprPtr> strict_params(const ojson& params_schema, const std::string& where) {
    schemas_.push_back(std::make_unique<ojson>(params_schema));
    const ojson& root = *schemas_.back();
    JsonSchemaOptions o = json_;
    o.strict = true;
    JsonSchemaRules& r = rules_for(root, o);
    DI_ASSIGN_OR_RETURN(ojson s, r.resolve(root, where + ".parameters"));
    if (!s.is_object()) return bad(where + ".parameters", "a strict tool needs an object schema");
    if (s.contains("type") && s["type"] != "object")
      return bad(where + ".parameters", "a strict tool's parameters must be of type object, got " + s["type"].dump());
    for (const char* k : {"anyOf", "oneOf", "allOf", "patternProperties", "minProperties", "maxProperties"}) {
      if (s.contains(k))
        return Status::unsupported("chat_output: " + where + ".parameters: keyword '" + std::string(k) +
                                   "' is not supported at the top of a strict tool's parameters");
    }
    const ojson props = s.contains("properties") ? s["properties"] : ojson::object();
    if (!props.is_object()) return bad(where + ".parameters.properties", "expected an object");
    std::vector<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) return bad(where + ".parameters.required", "expected an array");
      for (const ojson& k : s["required"]) {
        if (!k.is_string()) return bad(where + ".parameters.required", "expected strings");
        if (!props.contains(k.get<std::string>()))
          return bad(where + ".parameters.required", "\"" + k.get<std::string>() + "\" is not among the properties");
        required.push_back(k.get<std::string>());
      }
    }
    struct Member {
      ExprPtr expr;
      bool required;
    };
    std::vector<Member> members;
    const std::string& p = markup("parameter");
    for (auto it = props.begin(); it != props.end(); ++it) {
      const std::string& key = it.key();
      if (key.find('"') != std::string::npos) return bad(where + ".parameters.properties", "key '" + key + "' contains '\"'");
      const std::string path = "#/properties/" + key;
      const bool req = std::find(required.begin(), required.end(), key) != required.end();
      if (it.value().is_boolean() && !it.value().get<bool>()) {
        if (req) return bad(where + ".parameters", "required property \"" + key + "\" has schema false");
        continue;
      }
      DI_ASSIGN_OR_RETURN(uint32_t json_rule, r.rule(it.value(), path));
      DI_ASSIGN_OR_RETURN(ExprPtr raw, raw_string(r, it.value(), path, 0));
      ExprPtr value = alt({seq({literal("true\">"), raw}), seq({literal("false\">"), rule_ref(json_rule)})});
      members.push_back({seq({param_open(literal(key)), value, close_(p)}), req});
    }
    // rest[i]: members i.. each preceded by "\n" (the first present one has none).
    const size_t n = members.size();
    std::vector<uint32_t> rest(n + 1);
    for (size_t i = 0; i <= n; ++i) rest[i] = b_.declare(where + "/params" + std::to_string(i));
    b_.define(rest[n], empty());
    for (size_t i = n; i-- > 0;) {
      ExprPtr one = seq({literal("\n"), members[i].expr});
      b_.define(rest[i], seq({members[i].required ? one : opt(one), rule_ref(rest[i + 1])}));
    }
    std::vector<ExprPtr> first;
    bool any_required = false;
    for (size_t i = 0; i < n && !any_required; ++i) {
      first.push_back(seq({members[i].expr, rule_ref(rest[i + 1])}));
      any_required = members[i].required;
    }
    if (!any_required) first.push_back(empty());
    return alt(std::move(first));
  }

  const ojson& spec_;
  JsonSchemaOptions json_;
  GrammarBuilder b_;
  Status status_ = Status::ok();
  ExprPtr text_char_;
  ExprPtr free_params_;
  std::function<ExprPtr(const std::string&)> open_, close_;
  std::vector<std::unique_ptr<ojson>> schemas_;  // roots the JsonSchemaRules refer to
  std::vector<std::unique_ptr<JsonSchemaRules>> rules_;
};

}  // namespace

Result<std::shared_ptr<const Grammar>> compile_chat_output(const ojson& spec, const JsonSchemaOptions& json,
                                                           const GrammarLimits& limits) {
  ChatGrammarBuilder b(spec, json, limits);
  return b.build();
}

Result<std::shared_ptr<const Grammar>> compile_chat_output_text(std::string_view text, const JsonSchemaOptions& json,
                                                                const GrammarLimits& limits) {
  ojson spec = ojson::parse(text.begin(), text.end(), nullptr, false);
  if (spec.is_discarded()) return Status::parse("chat_output: the spec is not valid JSON");
  return compile_chat_output(spec, json, limits);
}

}  // namespace di::engine::constrain
