// Value: what a chat template computes with — Jinja's undefined and none, booleans, integers,
// floats, strings, lists, mappings (insertion-ordered, as Python dicts) and namespace() objects.
// Lists and mappings are shared (a template's `set ns.x = ...` mutates the namespace it names);
// everything else is copied. Knows no syntax.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::recipe::chat_template {

struct Value;
using List = std::vector<Value>;
using Mapping = std::vector<std::pair<std::string, Value>>;

struct Value {
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kMapping, kNamespace };
  Kind kind = Kind::kUndefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::shared_ptr<List> list;
  std::shared_ptr<Mapping> map;  // kMapping and kNamespace

  static Value undefined() { return {}; }
  static Value none() { Value v; v.kind = Kind::kNone; return v; }
  static Value boolean(bool x) { Value v; v.kind = Kind::kBool; v.b = x; return v; }
  static Value integer(int64_t x) { Value v; v.kind = Kind::kInt; v.i = x; return v; }
  static Value number(double x) { Value v; v.kind = Kind::kFloat; v.f = x; return v; }
  static Value string(std::string x) { Value v; v.kind = Kind::kString; v.s = std::move(x); return v; }
  static Value make_list(List x = {}) {
    Value v; v.kind = Kind::kList; v.list = std::make_shared<List>(std::move(x)); return v;
  }
  static Value make_mapping(Mapping x = {}, Kind k = Kind::kMapping) {
    Value v; v.kind = k; v.map = std::make_shared<Mapping>(std::move(x)); return v;
  }

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_none() const { return kind == Kind::kNone; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_mapping() const { return kind == Kind::kMapping || kind == Kind::kNamespace; }

  // A mapping's entry, or nullptr.
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v);  // mapping / namespace only
};

const char* kind_name(Value::Kind k);  // "undefined", "none", "boolean", ... for error messages

// Python truthiness: undefined, none, false, 0, "", [] and {} are false.
bool truthy(const Value& v);

// The text `{{ v }}` writes: strings as they are, undefined as "", none as "None", booleans as
// "True"/"False", numbers as Python prints them, containers as Python's repr.
std::string to_output(const Value& v);

// Python's ==: numbers by value across int and float, containers element by element.
bool equals(const Value& a, const Value& b);

struct JsonFormat {
  int indent = -1;  // < 0: one line
  std::string item_separator, key_separator;  // empty: json.dumps' defaults for `indent`
  bool sort_keys = false;
};
// json.dumps(v) as the tojson filter writes it (non-ASCII kept, as ensure_ascii=False).
std::string to_json_text(const Value& v, const JsonFormat& format);

// A JSON document as template data (objects keep their key order).
Value from_json(const nlohmann::ordered_json& j);

}  // namespace di::recipe::chat_template
