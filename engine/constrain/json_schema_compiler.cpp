// JSON Schema compiler: one grammar rule per distinct subschema (memoized by its text, which also
// ties recursive $refs), objects as a fixed property order with optional members and extra keys
// between them, arrays as prefix items then repeated items within the count bounds.
#include "engine/constrain/json_schema_compiler.h"

#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "engine/constrain/char_class.h"
#include "engine/constrain/json_number_range.h"
#include "engine/constrain/json_schema_merge.h"
#include "engine/constrain/regex_compiler.h"

namespace di::engine::constrain {

ExprPtr json_format_expr(const std::string& format);        // json_formats.cpp
bool json_format_unassertable(const std::string& format);  // json_formats.cpp

namespace {

constexpr int kMaxDepth = 48;
const char* const kAllTypes[] = {"null", "boolean", "object", "array", "string", "number"};

Status unsupported_keyword(const std::string& path, const std::string& keyword, const std::string& why = "") {
  return Status::unsupported("json_schema: " + path + ": keyword '" + keyword + "' is not supported" +
                             (why.empty() ? "" : " (" + why + ")"));
}

Status invalid(const std::string& path, const std::string& what) {
  return Status::invalid_argument("json_schema: " + path + ": " + what);
}

// The spelling of each code point of `key` inside a JSON string literal.
std::vector<std::string> key_units(const std::string& key) {
  std::vector<std::string> units;
  for (size_t i = 0; i < key.size();) {
    unsigned char c = key[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    n = std::min(n, key.size() - i);
    std::string one = key.substr(i, n);
    std::string spelled = ojson(one).dump();
    units.push_back(spelled.substr(1, spelled.size() - 2));
    i += n;
  }
  return units;
}

}  // namespace

class JsonSchemaRules::Compiler {
 public:
  Compiler(GrammarBuilder& b, const ojson& root, const JsonSchemaOptions& o) : root_(root), opts_(o), b_(b) {
    string_ = b_.declare("string");
    b_.define(string_, seq({literal("\""), star(json_string_char()), literal("\"")}));
    number_ = b_.declare("number");
    b_.define(number_, json_number());
    integer_ = b_.declare("integer");
    b_.define(integer_, json_integer());
    value_ = b_.declare("value");
    object_ = b_.declare("object");
    array_ = b_.declare("array");
    ExprPtr member = seq({rule_ref(string_), W(), literal(":"), W(), rule_ref(value_)});
    b_.define(object_, seq({literal("{"), W(), opt(seq({member, star(seq({sep(), member})), W()})), literal("}")}));
    b_.define(array_, seq({literal("["), W(), opt(seq({rule_ref(value_), star(seq({sep(), rule_ref(value_)})), W()})), literal("]")}));
    b_.define(value_, alt({rule_ref(object_), rule_ref(array_), rule_ref(string_), rule_ref(number_), literal("true"),
                           literal("false"), literal("null")}));
  }

  Result<std::shared_ptr<const Grammar>> compile() {
    DI_ASSIGN_OR_RETURN(uint32_t root, rule_for(root_, "#", 0));
    return b_.build(root);
  }

  Result<std::shared_ptr<const Grammar>> compile_any(bool object_only) {
    return b_.build(object_only ? object_ : value_);
  }

  uint32_t any_value() const { return value_; }
  uint32_t any_object() const { return object_; }

  Result<uint32_t> rule_for(const ojson& s, const std::string& path, int depth) {
    if (s.is_boolean() && s.get<bool>()) return value_;
    std::string key = s.dump();
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    uint32_t r = b_.declare(path);
    memo_.emplace(std::move(key), r);
    DI_ASSIGN_OR_RETURN(ExprPtr e, schema_expr(s, path, depth + 1));
    b_.define(r, e);
    return r;
  }

  // Replaces a top-level $ref by its target merged with the siblings.
  Result<ojson> deref(const ojson& s, const std::string& path) {
    ojson cur = s;
    for (int i = 0; cur.is_object() && cur.contains("$ref"); ++i) {
      if (i > 16) return Status::limit("json_schema: " + path + ": $ref chain longer than 16");
      if (!cur["$ref"].is_string()) return invalid(path, "$ref must be a string");
      DI_ASSIGN_OR_RETURN(const ojson* t, resolve_ref(root_, cur["$ref"].get<std::string>(), path));
      ojson rest = cur;
      rest.erase("$ref");
      DI_ASSIGN_OR_RETURN(cur, merge_schemas(*t, rest, path));
    }
    return cur;
  }

 private:
  // Whitespace is inlined rather than called: as a rule of its own every token starting with a
  // space would leave the rule after one byte, and the mask would have to check each of them
  // against the full stack.
  ExprPtr W() const {
    if (opts_.whitespace != JsonWhitespace::kFlexible) return empty();
    return repeat(bytes({{' ', ' '}, {'\t', '\t'}, {'\n', '\n'}, {'\r', '\r'}}), 0,
                  opts_.max_whitespace == 0 ? Expr::kUnbounded : opts_.max_whitespace);
  }
  ExprPtr sep() const { return seq({W(), literal(","), W()}); }

  Status check_keywords(const ojson& s, const std::string& path) {
    static const std::set<std::string> kNever = {"not", "if", "dependentRequired", "dependentSchemas", "dependencies",
                                                 "contains", "minContains", "maxContains", "unevaluatedItems",
                                                 "unevaluatedProperties", "propertyNames", "$dynamicRef", "$recursiveRef"};
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      if (kNever.count(k)) {
        if ((k == "dependentRequired" || k == "dependentSchemas" || k == "dependencies") && it->is_object() && it->empty()) continue;
        return unsupported_keyword(path, k);
      }
      if (k == "patternProperties" && !(it->is_object() && it->empty())) return unsupported_keyword(path, k);
      if (k == "uniqueItems" && it->is_boolean() && it->get<bool>()) {
        if (!(s.contains("maxItems") && s["maxItems"].is_number() && s["maxItems"].get<double>() <= 1)) {
          return unsupported_keyword(path, k);
        }
      }
    }
    return Status::ok();
  }

  Result<ExprPtr> schema_expr(const ojson& s, const std::string& path, int depth) {
    if (depth > kMaxDepth) return Status::limit("json_schema: " + path + ": schema nesting deeper than " + std::to_string(kMaxDepth));
    if (s.is_boolean()) return s.get<bool>() ? rule_ref(value_) : nothing();
    if (!s.is_object()) return invalid(path, "a schema must be an object or a boolean");
    DI_RETURN_IF_ERROR(check_keywords(s, path));

    if (s.contains("$ref")) {
      bool has_siblings = false;
      for (auto it = s.begin(); it != s.end(); ++it) has_siblings = has_siblings || (it.key() != "$ref" && is_assertion_keyword(it.key()));
      if (!s["$ref"].is_string()) return invalid(path, "$ref must be a string");
      if (!has_siblings) {
        DI_ASSIGN_OR_RETURN(const ojson* t, resolve_ref(root_, s["$ref"].get<std::string>(), path));
        DI_ASSIGN_OR_RETURN(uint32_t r, rule_for(*t, s["$ref"].get<std::string>(), depth));
        return rule_ref(r);
      }
      DI_ASSIGN_OR_RETURN(ojson merged, deref(s, path));
      return schema_expr(merged, path, depth + 1);
    }
    if (s.contains("allOf")) {
      if (!s["allOf"].is_array()) return invalid(path, "allOf must be an array");
      ojson merged = s;
      merged.erase("allOf");
      for (size_t i = 0; i < s["allOf"].size(); ++i) {
        std::string p = path + "/allOf/" + std::to_string(i);
        DI_ASSIGN_OR_RETURN(ojson branch, deref(s["allOf"][i], p));
        DI_ASSIGN_OR_RETURN(merged, merge_schemas(merged, branch, p));
      }
      return schema_expr(merged, path, depth + 1);
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      if (!s[key].is_array() || s[key].empty()) return invalid(path, std::string(key) + " must be a non-empty array");
      ojson base = s;
      base.erase(key);
      std::vector<ojson> branches;
      for (size_t i = 0; i < s[key].size(); ++i) {
        std::string p = path + "/" + key + "/" + std::to_string(i);
        DI_ASSIGN_OR_RETURN(ojson branch, deref(s[key][i], p));
        DI_ASSIGN_OR_RETURN(ojson m, merge_schemas(base, branch, p));
        branches.push_back(std::move(m));
      }
      if (std::string(key) == "oneOf") DI_RETURN_IF_ERROR(check_exclusive(branches, path));
      std::vector<ExprPtr> alts;
      for (size_t i = 0; i < branches.size(); ++i) {
        DI_ASSIGN_OR_RETURN(uint32_t r, rule_for(branches[i], path + "/" + key + "/" + std::to_string(i), depth));
        alts.push_back(rule_ref(r));
      }
      return alt(std::move(alts));
    }

    std::vector<std::string> types;
    if (s.contains("type")) {
      const ojson& t = s["type"];
      if (t.is_string()) {
        types.push_back(t.get<std::string>());
      } else if (t.is_array()) {
        for (auto& x : t) {
          if (!x.is_string()) return invalid(path, "type: expected strings");
          types.push_back(x.get<std::string>());
        }
      } else {
        return invalid(path, "type: expected a string or an array");
      }
    } else {
      types.assign(std::begin(kAllTypes), std::end(kAllTypes));
    }
    if (s.contains("nullable") && s["nullable"].is_boolean() && s["nullable"].get<bool>()) types.push_back("null");
    auto has_type = [&](const std::string& t) {
      for (auto& x : types) {
        if (x == t || (t == "integer" && x == "number")) return true;
      }
      return false;
    };

    if (s.contains("const") || s.contains("enum")) {
      ojson values = ojson::array();
      if (s.contains("const")) {
        values.push_back(s["const"]);
      } else if (s["enum"].is_array()) {
        values = s["enum"];
      } else {
        return invalid(path, "enum must be an array");
      }
      if (s.contains("const") && s.contains("enum") &&
          std::find(s["enum"].begin(), s["enum"].end(), s["const"]) == s["enum"].end()) {
        values = ojson::array();
      }
      std::vector<ExprPtr> alts;
      for (const ojson& v : values) {
        if (has_type(type_of(v))) alts.push_back(literal_value(v));
      }
      return alt(std::move(alts));
    }

    std::vector<ExprPtr> alts;
    std::set<std::string> seen;
    for (const std::string& t : types) {
      if (!seen.insert(t).second) continue;
      if (t == "integer" && seen.count("number")) continue;
      if (t == "null") {
        alts.push_back(literal("null"));
      } else if (t == "boolean") {
        alts.push_back(alt({literal("true"), literal("false")}));
      } else if (t == "integer" || t == "number") {
        bool integer = t == "integer" && !(std::find(types.begin(), types.end(), "number") != types.end());
        if (t == "integer" && !integer) continue;
        DI_ASSIGN_OR_RETURN(ExprPtr e, number_expr(s, path, integer));
        alts.push_back(e);
      } else if (t == "string") {
        DI_ASSIGN_OR_RETURN(ExprPtr e, string_expr(s, path));
        alts.push_back(e);
      } else if (t == "array") {
        DI_ASSIGN_OR_RETURN(ExprPtr e, array_expr(s, path, depth));
        alts.push_back(e);
      } else if (t == "object") {
        DI_ASSIGN_OR_RETURN(ExprPtr e, object_expr(s, path, depth));
        alts.push_back(e);
      } else {
        return invalid(path, "type: unknown type '" + t + "'");
      }
    }
    return alt(std::move(alts));
  }

  static std::string type_of(const ojson& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "boolean";
    if (v.is_number_integer()) return "integer";
    if (v.is_number()) return v.get<double>() == double(int64_t(v.get<double>())) ? "integer" : "number";
    if (v.is_string()) return "string";
    if (v.is_array()) return "array";
    return "object";
  }

  // Types a (merged, dereferenced) branch may accept; "integer" is inside "number".
  static std::set<std::string> possible_types(const ojson& s) {
    std::set<std::string> out;
    if (s.is_boolean()) {
      if (s.get<bool>()) out.insert(std::begin(kAllTypes), std::end(kAllTypes));
      return out;
    }
    if (s.contains("const")) return {type_of(s["const"])};
    if (s.contains("enum") && s["enum"].is_array()) {
      for (auto& v : s["enum"]) out.insert(type_of(v));
      return out;
    }
    if (s.contains("anyOf") || s.contains("oneOf") || s.contains("allOf") || !s.contains("type")) {
      out.insert(std::begin(kAllTypes), std::end(kAllTypes));
      return out;
    }
    if (s["type"].is_string()) out.insert(s["type"].get<std::string>());
    if (s["type"].is_array()) {
      for (auto& t : s["type"]) {
        if (t.is_string()) out.insert(t.get<std::string>());
      }
    }
    if (s.contains("nullable") && s["nullable"] == true) out.insert("null");
    return out;
  }

  static bool values_disjoint(const ojson& a, const ojson& b) {
    auto vals = [](const ojson& s) {
      if (s.contains("const")) return ojson::array({s["const"]});
      return s["enum"];
    };
    for (auto& x : vals(a)) {
      for (auto& y : vals(b)) {
        if (x == y) return false;
      }
    }
    return true;
  }

  // oneOf equals anyOf when no instance can satisfy two branches; prove it by types, by
  // constant values, or by a required property whose constants differ (a discriminator).
  Status check_exclusive(const std::vector<ojson>& br, const std::string& path) {
    auto is_const = [](const ojson& s) { return s.is_object() && (s.contains("const") || (s.contains("enum") && s["enum"].is_array())); };
    for (size_t i = 0; i < br.size(); ++i) {
      for (size_t j = i + 1; j < br.size(); ++j) {
        auto ti = possible_types(br[i]), tj = possible_types(br[j]);
        bool overlap = false;
        for (auto& t : ti) {
          overlap = overlap || tj.count(t) || (t == "integer" && tj.count("number")) || (t == "number" && tj.count("integer"));
        }
        if (!overlap) continue;
        if (is_const(br[i]) && is_const(br[j]) && values_disjoint(br[i], br[j])) continue;
        bool discriminated = false;
        if (ti == std::set<std::string>{"object"} && tj == ti && br[i].contains("properties") && br[j].contains("properties") &&
            br[i].contains("required") && br[j].contains("required")) {
          for (auto& k : br[i]["required"]) {
            if (!k.is_string()) continue;
            std::string key = k.get<std::string>();
            if (std::find(br[j]["required"].begin(), br[j]["required"].end(), k) == br[j]["required"].end()) continue;
            const ojson& pi = br[i]["properties"].contains(key) ? br[i]["properties"][key] : ojson(true);
            const ojson& pj = br[j]["properties"].contains(key) ? br[j]["properties"][key] : ojson(true);
            if (is_const(pi) && is_const(pj) && values_disjoint(pi, pj)) discriminated = true;
          }
        }
        if (discriminated) continue;
        return unsupported_keyword(path, "oneOf", "branches " + std::to_string(i) + " and " + std::to_string(j) +
                                                      " may both match; only provably exclusive branches are supported");
      }
    }
    return Status::ok();
  }

  // A JSON value spelled with the whitespace policy between its tokens.
  ExprPtr literal_value(const ojson& v) {
    if (v.is_object()) {
      std::vector<ExprPtr> items = {literal("{"), W()};
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) items.push_back(sep());
        first = false;
        items.push_back(literal(ojson(it.key()).dump()));
        items.push_back(W());
        items.push_back(literal(":"));
        items.push_back(W());
        items.push_back(literal_value(it.value()));
      }
      items.push_back(W());
      items.push_back(literal("}"));
      return seq(std::move(items));
    }
    if (v.is_array()) {
      std::vector<ExprPtr> items = {literal("["), W()};
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) items.push_back(sep());
        items.push_back(literal_value(v[i]));
      }
      items.push_back(W());
      items.push_back(literal("]"));
      return seq(std::move(items));
    }
    if (v.is_number()) {
      // JSON Schema compares numbers by value: 1, 1.0 and 1.00 are one constant.
      auto d = Decimal::parse(v.dump());
      if (d.is_ok()) {
        std::string base = (d->negative ? "-" : "") + d->int_digits;
        ExprPtr sign = d->is_zero() ? opt(literal("-")) : empty();
        if (d->frac_digits.empty()) return seq({sign, literal(base), opt(seq({literal("."), plus(literal("0"))}))});
        return seq({sign, literal(base + "." + d->frac_digits), star(literal("0"))});
      }
    }
    return literal(v.dump());
  }

  static Result<std::optional<uint32_t>> count_keyword(const ojson& s, const char* k, const std::string& path) {
    if (!s.contains(k)) return std::optional<uint32_t>();
    const ojson& v = s[k];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != double(int64_t(v.get<double>()))) {
      return invalid(path, std::string(k) + ": expected a non-negative integer");
    }
    double d = v.get<double>();
    return std::optional<uint32_t>(d > 4e9 ? UINT32_MAX - 1 : uint32_t(d));
  }

  Result<ExprPtr> number_expr(const ojson& s, const std::string& path, bool integer) {
    if (s.contains("multipleOf")) {
      const ojson& m = s["multipleOf"];
      if (!(integer && m.is_number() && m.get<double>() == 1.0)) return unsupported_keyword(path, "multipleOf");
    }
    // The strictest of each side's bounds; at equal values the exclusive one.
    struct Candidate {
      double value;
      NumberBound bound;
    };
    std::optional<Candidate> lower, upper;
    // Draft 4 spelled exclusivity as a boolean next to minimum / maximum.
    auto flag = [&](const char* key) { return s.contains(key) && s[key].is_boolean() && s[key].get<bool>(); };
    auto take = [&](const char* key, bool inclusive, bool is_lower) -> Status {
      if (!s.contains(key) || s[key].is_boolean()) return Status::ok();
      if (!s[key].is_number()) return invalid(path, std::string(key) + ": expected a number");
      DI_ASSIGN_OR_RETURN(Decimal d, Decimal::parse(s[key].dump()));
      Candidate c{s[key].get<double>(), NumberBound{d, inclusive}};
      std::optional<Candidate>& slot = is_lower ? lower : upper;
      if (!slot || (is_lower ? c.value > slot->value : c.value < slot->value) || (c.value == slot->value && !inclusive)) slot = c;
      return Status::ok();
    };
    DI_RETURN_IF_ERROR(take("minimum", !flag("exclusiveMinimum"), true));
    DI_RETURN_IF_ERROR(take("exclusiveMinimum", false, true));
    DI_RETURN_IF_ERROR(take("maximum", !flag("exclusiveMaximum"), false));
    DI_RETURN_IF_ERROR(take("exclusiveMaximum", false, false));
    std::optional<NumberBound> lo, hi;
    if (lower) lo = lower->bound;
    if (upper) hi = upper->bound;
    if (!lo && !hi) return rule_ref(integer ? integer_ : number_);
    return number_range(lo, hi, integer);
  }

  Result<ExprPtr> string_expr(const ojson& s, const std::string& path) {
    DI_ASSIGN_OR_RETURN(std::optional<uint32_t> min_len, count_keyword(s, "minLength", path));
    DI_ASSIGN_OR_RETURN(std::optional<uint32_t> max_len, count_keyword(s, "maxLength", path));
    bool has_len = (min_len && *min_len > 0) || max_len;
    ExprPtr body;
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) return invalid(path, "pattern must be a string");
      if (has_len) return unsupported_keyword(path, "pattern", "together with minLength/maxLength");
      RegexOptions ro;
      ro.json_string = true;
      ro.search = true;
      auto e = regex_to_expr(s["pattern"].get<std::string>(), ro);
      if (!e.is_ok()) return Status(e.status().code(), "json_schema: " + path + ": pattern: " + e.status().message());
      body = *e;
    }
    if (opts_.assert_formats && s.contains("format") && s["format"].is_string()) {
      ExprPtr f = json_format_expr(s["format"].get<std::string>());
      if (f) {
        if (body) return unsupported_keyword(path, "format", "together with pattern");
        if (has_len) return unsupported_keyword(path, "format", "together with minLength/maxLength");
        body = f;
      } else if (json_format_unassertable(s["format"].get<std::string>())) {
        // Accepting any string would silently drop an assertion the caller asked for.
        return unsupported_keyword(path, "format", "'" + s["format"].get<std::string>() + "' cannot be enforced");
      }
      // Other (non-standard) formats are annotations in draft 2020-12: any string is valid.
    }
    if (!body) {
      if (!has_len) return rule_ref(string_);
      uint32_t lo = min_len ? *min_len : 0;
      uint32_t hi = max_len ? *max_len : Expr::kUnbounded;
      body = repeat(json_string_char(), lo, hi);
    }
    return seq({literal("\""), body, literal("\"")});
  }

  Result<ExprPtr> array_expr(const ojson& s, const std::string& path, int depth) {
    DI_ASSIGN_OR_RETURN(std::optional<uint32_t> min_items, count_keyword(s, "minItems", path));
    DI_ASSIGN_OR_RETURN(std::optional<uint32_t> max_items, count_keyword(s, "maxItems", path));
    const uint32_t lo = min_items ? *min_items : 0;
    const uint32_t hi = max_items ? *max_items : Expr::kUnbounded;
    ojson prefix = ojson::array();
    ojson items = true;
    if (s.contains("prefixItems")) {
      if (!s["prefixItems"].is_array()) return invalid(path, "prefixItems must be an array");
      prefix = s["prefixItems"];
      if (s.contains("items")) items = s["items"];
    } else if (s.contains("items") && s["items"].is_array()) {  // draft 4-7 tuple form
      prefix = s["items"];
      if (s.contains("additionalItems")) items = s["additionalItems"];
    } else if (s.contains("items")) {
      items = s["items"];
    }
    if (items.is_array()) return invalid(path, "items: expected a schema");
    std::vector<ExprPtr> elems;
    for (size_t i = 0; i < prefix.size(); ++i) {
      DI_ASSIGN_OR_RETURN(uint32_t r, rule_for(prefix[i], path + "/prefixItems/" + std::to_string(i), depth));
      elems.push_back(prefix[i] == false ? nothing() : rule_ref(r));
    }
    ExprPtr item = nothing();
    if (!(items.is_boolean() && !items.get<bool>())) {
      DI_ASSIGN_OR_RETURN(uint32_t r, rule_for(items, path + "/items", depth));
      item = rule_ref(r);
    }
    const uint32_t k = static_cast<uint32_t>(elems.size());
    // tail(c): the rest of the array after c elements, each one preceded by a comma. Past the
    // prefix it is a bounded repetition of items; inside it, stop (when enough) or go on.
    const uint32_t c0 = std::max<uint32_t>(k, 1);
    ExprPtr tail = (hi != Expr::kUnbounded && hi < c0)
                       ? nothing()
                       : repeat(seq({sep(), item}), lo > c0 ? lo - c0 : 0, hi == Expr::kUnbounded ? hi : hi - c0);
    for (uint32_t c = c0; c-- > 1;) {
      tail = alt({c >= lo ? empty() : nothing(), c < hi ? seq({sep(), elems[c], tail}) : nothing()});
    }
    ExprPtr first = k > 0 ? elems[0] : item;
    ExprPtr after_first = tail;
    ExprPtr body = alt({lo == 0 ? empty() : nothing(), hi >= 1 ? seq({first, after_first}) : nothing()});
    return seq({literal("["), W(), body, W(), literal("]")});
  }

  // A JSON string body equal to none of `keys` (so extra keys never repeat a declared one).
  ExprPtr key_not_in(const std::vector<std::vector<std::string>>& keys, size_t depth, std::vector<size_t> idx) {
    bool terminal = false;
    std::map<std::string, std::vector<size_t>> children;
    for (size_t i : idx) {
      if (keys[i].size() == depth) {
        terminal = true;
      } else {
        children[keys[i][depth]].push_back(i);
      }
    }
    std::vector<ExprPtr> alts;
    if (!terminal) alts.push_back(empty());
    CharClass plain;
    plain.add(0x20, 0x21);
    plain.add(0x23, 0x5B);
    plain.add(0x5D, CharClass::kMaxCodepoint);
    std::string short_escapes = "\"\\/bfnrt";
    for (auto& [unit, next] : children) {
      alts.push_back(seq({literal(unit), key_not_in(keys, depth + 1, next)}));
      if (unit.size() == 2 && unit[0] == '\\') {
        short_escapes.erase(std::remove(short_escapes.begin(), short_escapes.end(), unit[1]), short_escapes.end());
      } else if (unit[0] != '\\') {
        uint32_t cp = 0;
        unsigned char c0 = unit[0];
        int n = c0 < 0x80 ? 1 : (c0 >> 5) == 6 ? 2 : (c0 >> 4) == 14 ? 3 : 4;
        cp = n == 1 ? c0 : c0 & (0x7F >> n);
        for (int i = 1; i < n && i < int(unit.size()); ++i) cp = (cp << 6) | (uint8_t(unit[i]) & 0x3F);
        CharClass one = CharClass::range(cp, cp).complement();
        CharClass keep;
        for (auto [a, b] : plain.ranges()) {
          for (auto [x, y] : one.ranges()) {
            if (std::max(a, x) <= std::min(b, y)) keep.add(std::max(a, x), std::min(b, y));
          }
        }
        plain = keep;
      }
    }
    std::vector<ByteRange> esc;
    for (char c : short_escapes) esc.push_back(ByteRange{uint8_t(c), uint8_t(c)});
    ExprPtr hex = bytes({{'0', '9'}, {'A', 'F'}, {'a', 'f'}});
    ExprPtr other = alt({plain.to_utf8(), seq({literal("\\"), alt({bytes(esc), seq({literal("u"), hex, hex, hex, hex})})})});
    alts.push_back(seq({other, star(json_string_char())}));
    return alt(std::move(alts));
  }

  Result<ExprPtr> object_expr(const ojson& s, const std::string& path, int depth) {
    const ojson empty_obj = ojson::object();
    const ojson& props = s.contains("properties") ? s["properties"] : empty_obj;
    if (!props.is_object()) return invalid(path, "properties must be an object");
    ojson ap = opts_.strict ? ojson(false) : ojson(true);
    if (s.contains("additionalProperties")) ap = s["additionalProperties"];
    std::vector<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) return invalid(path, "required must be an array");
      for (auto& r : s["required"]) {
        if (!r.is_string()) return invalid(path, "required: expected strings");
        if (std::find(required.begin(), required.end(), r.get<std::string>()) == required.end()) required.push_back(r.get<std::string>());
      }
    }
    if (props.empty() && required.empty() && ap == true && !s.contains("minProperties") && !s.contains("maxProperties")) {
      return rule_ref(object_);
    }
    struct Member {
      std::string key;
      ojson schema;
      bool required;
    };
    std::vector<Member> members;
    for (auto it = props.begin(); it != props.end(); ++it) {
      bool req = std::find(required.begin(), required.end(), it.key()) != required.end();
      members.push_back({it.key(), it.value(), req});
    }
    for (const std::string& r : required) {
      if (!props.contains(r)) members.push_back({r, ap, true});
    }
    size_t num_required = required.size();
    DI_ASSIGN_OR_RETURN(std::optional<uint32_t> min_props, count_keyword(s, "minProperties", path));
    DI_ASSIGN_OR_RETURN(std::optional<uint32_t> max_props, count_keyword(s, "maxProperties", path));
    if (min_props && *min_props > num_required) return unsupported_keyword(path, "minProperties", "more than the required properties");
    if (max_props && !(ap == false && members.size() <= *max_props)) return unsupported_keyword(path, "maxProperties");

    std::vector<std::vector<std::string>> all_keys;
    std::vector<size_t> idx;
    for (auto& m : members) {
      idx.push_back(all_keys.size());
      all_keys.push_back(key_units(m.key));
    }
    ExprPtr extra = nothing();
    if (!(ap.is_boolean() && !ap.get<bool>())) {
      DI_ASSIGN_OR_RETURN(uint32_t vr, rule_for(ap, path + "/additionalProperties", depth));
      uint32_t er = b_.declare(path + "/extra");
      b_.define(er, seq({literal("\""), key_not_in(all_keys, 0, idx), literal("\""), W(), literal(":"), W(), rule_ref(vr)}));
      extra = rule_ref(er);
    }
    std::vector<ExprPtr> member_expr;
    std::vector<bool> present;  // false: the member's schema is `false`, so it never appears
    for (size_t i = 0; i < members.size(); ++i) {
      const Member& m = members[i];
      if (m.schema.is_boolean() && !m.schema.get<bool>()) {
        if (m.required) return nothing();
        member_expr.push_back(nothing());
        continue;
      }
      DI_ASSIGN_OR_RETURN(uint32_t vr, rule_for(m.schema, path + "/properties/" + m.key, depth));
      member_expr.push_back(seq({literal(ojson(m.key).dump()), W(), literal(":"), W(), rule_ref(vr)}));
    }
    // rest[i]: members i.. each preceded by a comma, then the extra keys. Extras go last so the
    // grammar stays unambiguous: were they allowed between members, an extra after a skipped
    // optional member could belong to any gap, and the matcher would track every reading.
    const size_t n = members.size();
    std::vector<uint32_t> rest(n + 1);
    for (size_t i = 0; i <= n; ++i) rest[i] = b_.declare(path + "/members" + std::to_string(i));
    b_.define(rest[n], star(seq({sep(), extra})));
    for (size_t i = n; i-- > 0;) {
      ExprPtr one = seq({sep(), member_expr[i]});
      b_.define(rest[i], seq({members[i].required ? one : opt(one), rule_ref(rest[i + 1])}));
    }
    // The first member has no comma: any member up to the first required one, or (with no
    // required member) an extra key or nothing.
    std::vector<ExprPtr> first;
    bool any_required = false;
    for (size_t i = 0; i < n; ++i) {
      first.push_back(seq({member_expr[i], rule_ref(rest[i + 1])}));
      if (members[i].required) {
        any_required = true;
        break;
      }
    }
    if (!any_required) {
      first.push_back(empty());
      first.push_back(seq({extra, rule_ref(rest[n])}));
    }
    return seq({literal("{"), W(), alt(std::move(first)), W(), literal("}")});
  }

  const ojson& root_;
  JsonSchemaOptions opts_;
  GrammarBuilder& b_;
  std::unordered_map<std::string, uint32_t> memo_;
  uint32_t string_ = 0, number_ = 0, integer_ = 0, value_ = 0, object_ = 0, array_ = 0;
};

JsonSchemaRules::JsonSchemaRules(GrammarBuilder& builder, const ojson& root, const JsonSchemaOptions& options)
    : c_(std::make_unique<Compiler>(builder, root, options)) {}
JsonSchemaRules::~JsonSchemaRules() = default;

Result<uint32_t> JsonSchemaRules::rule(const ojson& schema, const std::string& path) { return c_->rule_for(schema, path, 0); }
Result<ojson> JsonSchemaRules::resolve(const ojson& schema, const std::string& path) { return c_->deref(schema, path); }
uint32_t JsonSchemaRules::any_value() const { return c_->any_value(); }
uint32_t JsonSchemaRules::any_object() const { return c_->any_object(); }

Result<std::shared_ptr<const Grammar>> compile_json_schema(const ojson& schema, const JsonSchemaOptions& options,
                                                           const GrammarLimits& limits) {
  GrammarBuilder b;
  b.set_limits(limits);
  JsonSchemaRules::Compiler c(b, schema, options);
  return c.compile();
}

Result<std::shared_ptr<const Grammar>> compile_json_schema_text(std::string_view text, const JsonSchemaOptions& options,
                                                                const GrammarLimits& limits) {
  ojson schema = ojson::parse(text.begin(), text.end(), nullptr, false);
  if (schema.is_discarded()) return Status::parse("json_schema: the schema is not valid JSON");
  return compile_json_schema(schema, options, limits);
}

Result<std::shared_ptr<const Grammar>> compile_any_json(const JsonSchemaOptions& options, bool object_only,
                                                        const GrammarLimits& limits) {
  static const ojson kEmpty = ojson::object();
  GrammarBuilder b;
  b.set_limits(limits);
  JsonSchemaRules::Compiler c(b, kEmpty, options);
  return c.compile_any(object_only);
}

}  // namespace di::engine::constrain
