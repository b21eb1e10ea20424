// Value's conversions: truthiness, output text, equality, JSON in and out.
#include "recipe/chat_template/value.h"

#include "recipe/encoding/py_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace di::recipe::chat_template {

const Value* Value::find(const std::string& key) const {
  if (!map) return nullptr;
  for (const auto& [k, v] : *map)
    if (k == key) return &v;
  return nullptr;
}

void Value::set(const std::string& key, Value v) {
  for (auto& [k, old] : *map)
    if (k == key) {
      old = std::move(v);
      return;
    }
  map->emplace_back(key, std::move(v));
}

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::kUndefined: return "undefined";
    case Value::Kind::kNone: return "none";
    case Value::Kind::kBool: return "boolean";
    case Value::Kind::kInt: return "integer";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "string";
    case Value::Kind::kList: return "list";
    case Value::Kind::kMapping: return "mapping";
    case Value::Kind::kNamespace: return "namespace";
  }
  return "value";
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return v.b;
    case Value::Kind::kInt: return v.i != 0;
    case Value::Kind::kFloat: return v.f != 0;
    case Value::Kind::kString: return !v.s.empty();
    case Value::Kind::kList: return !v.list->empty();
    case Value::Kind::kMapping: return !v.map->empty();
    case Value::Kind::kNamespace: return true;
  }
  return false;
}

namespace {

// Shortest text that reads back as the same double (what Python's repr and JavaScript print for
// ordinary magnitudes).
std::string shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

std::string float_text(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = shortest(d);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";  // Python: 3.0, not 3
  return s;
}

void json_string(const std::string& s, std::string& out) { recipe::py_json_string(s, out); }

void json_value(const Value& v, const JsonFormat& f, int depth, std::string& out) {
  const std::string item_sep = !f.item_separator.empty() ? f.item_separator : (f.indent >= 0 ? "," : ", ");
  const std::string key_sep = !f.key_separator.empty() ? f.key_separator : ": ";
  auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<size_t>(f.indent) * static_cast<size_t>(d), ' ');
  };
  switch (v.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: out += "null"; return;
    case Value::Kind::kBool: out += v.b ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(v.i); return;
    case Value::Kind::kFloat: {
      // json.dumps writes floats as repr does; an integral float keeps its ".0".
      out += std::isfinite(v.f) ? float_text(v.f) : (std::isnan(v.f) ? "NaN" : (v.f > 0 ? "Infinity" : "-Infinity"));
      return;
    }
    case Value::Kind::kString: json_string(v.s, out); return;
    case Value::Kind::kList: {
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += item_sep;
        if (f.indent >= 0) newline(depth + 1);
        json_value((*v.list)[i], f, depth + 1, out);
      }
      if (f.indent >= 0) newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::kMapping:
    case Value::Kind::kNamespace: {
      if (v.map->empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : *v.map) entries.push_back(&e);
      if (f.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_sep;
        if (f.indent >= 0) newline(depth + 1);
        json_string(entries[i]->first, out);
        out += key_sep;
        json_value(entries[i]->second, f, depth + 1, out);
      }
      if (f.indent >= 0) newline(depth);
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string to_output(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return "";
    case Value::Kind::kNone: return "None";
    case Value::Kind::kBool: return v.b ? "True" : "False";
    case Value::Kind::kInt: return std::to_string(v.i);
    case Value::Kind::kFloat: return float_text(v.f);
    case Value::Kind::kString: return v.s;
    default: return to_json_text(v, JsonFormat{});
  }
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::kInt && b.kind == Value::Kind::kInt) return a.i == b.i;
    const double x = a.kind == Value::Kind::kInt ? static_cast<double>(a.i) : a.f;
    const double y = b.kind == Value::Kind::kInt ? static_cast<double>(b.i) : b.f;
    return x == y;
  }
  if (a.kind == Value::Kind::kBool && b.kind == Value::Kind::kBool) return a.b == b.b;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.s == b.s;
    case Value::Kind::kList:
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!equals((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Value::Kind::kMapping:
    case Value::Kind::kNamespace:
      if (a.map->size() != b.map->size()) return false;
      for (const auto& [k, v] : *a.map) {
        const Value* o = b.find(k);
        if (o == nullptr || !equals(v, *o)) return false;
      }
      return true;
    default: return false;
  }
}

std::string to_json_text(const Value& v, const JsonFormat& format) {
  std::string out;
  json_value(v, format, 0, out);
  return out;
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value::integer(static_cast<int64_t>(u))
                                                   : Value::number(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List l;
      l.reserve(j.size());
      for (const auto& e : j) l.push_back(from_json(e));
      return Value::make_list(std::move(l));
    }
    case nlohmann::ordered_json::value_t::object: {
      Mapping m;
      m.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) m.emplace_back(it.key(), from_json(it.value()));
      return Value::make_mapping(std::move(m));
    }
    default: return Value::undefined();
  }
}

}  // namespace di::recipe::chat_template
