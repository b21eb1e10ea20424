// raw_string_expr: walks the schema's string-relevant keywords ($ref resolved by the rules).
#include "engine/constrain/json_raw_string.h"

#include <algorithm>
#include <vector>

#include "engine/constrain/char_class.h"
#include "engine/constrain/json_schema_merge.h"
#include "engine/constrain/regex_compiler.h"

namespace di::engine::constrain {
namespace {

Result<ExprPtr> raw(JsonSchemaRules& r, const ojson& schema, const std::string& path, int depth) {
  const ExprPtr any_char = CharClass::any().to_utf8();
  if (depth > 8) return nothing();
  if (schema.is_boolean()) return schema.get<bool>() ? star(any_char) : nothing();
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
      DI_ASSIGN_OR_RETURN(ExprPtr e, raw(r, s[key][i], path + "/" + key + "/" + std::to_string(i), depth + 1));
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
    if (!e.is_ok()) return Status(e.status().code(), "json_schema: " + path + ": pattern: " + e.status().message());
    return *e;
  }
  auto count = [&](const char* k, uint32_t dflt) -> uint32_t {
    if (!s.contains(k) || !s[k].is_number_unsigned()) return dflt;
    return static_cast<uint32_t>(std::min<uint64_t>(s[k].get<uint64_t>(), UINT32_MAX - 1));
  };
  const uint32_t lo = count("minLength", 0), hi = count("maxLength", Expr::kUnbounded);
  if (lo == 0 && hi == Expr::kUnbounded) return star(any_char);
  return repeat(any_char, lo, hi);
}

}  // namespace

Result<ExprPtr> raw_string_expr(JsonSchemaRules& rules, const ojson& schema, const std::string& path) {
  return raw(rules, schema, path, 0);
}

}  // namespace di::engine::constrain
