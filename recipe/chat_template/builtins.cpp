// Filters, tests and methods. Each follows Jinja's / Python's definition for the arguments chat
// templates pass; anything else is an error, not a guess.
#include "recipe/chat_template/builtins.h"

#include <algorithm>
#include <cmath>

namespace di::recipe::chat_template {
namespace {

const Value kUndefined;

Status type_error(const std::string& what, const Value& v) {
  return Status::invalid_argument(what + ": got " + kind_name(v.kind));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip(const std::string& s, const Value& chars, bool left, bool right) {
  auto drop = [&](char c) { return chars.is_string() ? chars.s.find(c) != std::string::npos : is_space(c); };
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && drop(s[b])) ++b;
  if (right)
    while (e > b && drop(s[e - 1])) --e;
  return s.substr(b, e - b);
}

Result<std::vector<Value>> iterate(const Value& v, const char* what) {
  if (v.is_list()) return *v.list;
  if (v.is_mapping()) {
    std::vector<Value> keys;
    for (const auto& e : *v.map) keys.push_back(Value::string(e.first));
    return keys;
  }
  if (v.is_string()) {
    std::vector<Value> chars;
    for (char c : v.s) chars.push_back(Value::string(std::string(1, c)));
    return chars;
  }
  return type_error(std::string(what) + ": expected a list, mapping or string", v);
}

Value items_of(const Value& v) {
  List out;
  for (const auto& [k, x] : *v.map) out.push_back(Value::make_list({Value::string(k), x}));
  return Value::make_list(std::move(out));
}

std::string title_case(const std::string& s) {
  std::string out = s;
  bool start = true;
  for (char& c : out) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alpha) c = start ? static_cast<char>(std::toupper(c)) : static_cast<char>(std::tolower(c));
    start = !alpha;
  }
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Python's str.split(sep, maxsplit).
Result<Value> split(const std::string& s, const Value& sep, const Value& maxsplit) {
  int64_t max = maxsplit.kind == Value::Kind::kInt ? maxsplit.i : -1;
  List out;
  if (sep.is_undefined() || sep.is_none()) {
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size()) break;
      if (max >= 0 && static_cast<int64_t>(out.size()) == max) {
        std::string rest = s.substr(i);
        while (!rest.empty() && is_space(rest.back())) rest.pop_back();
        out.push_back(Value::string(rest));
        return Value::make_list(std::move(out));
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      out.push_back(Value::string(s.substr(i, j - i)));
      i = j;
    }
    return Value::make_list(std::move(out));
  }
  if (!sep.is_string()) return type_error("split: the separator must be a string", sep);
  if (sep.s.empty()) return Status::invalid_argument("split: empty separator");
  size_t i = 0;
  for (;;) {
    const size_t j = s.find(sep.s, i);
    if (j == std::string::npos || (max >= 0 && static_cast<int64_t>(out.size()) == max)) break;
    out.push_back(Value::string(s.substr(i, j - i)));
    i = j + sep.s.size();
  }
  out.push_back(Value::string(s.substr(i)));
  return Value::make_list(std::move(out));
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t i = 0;
  int64_t n = 0;
  for (;;) {
    const size_t j = s.find(from, i);
    if (j == std::string::npos || (count >= 0 && n == count)) break;
    out.append(s, i, j - i);
    out += to;
    i = j + from.size();
    ++n;
  }
  out.append(s, i, std::string::npos);
  return out;
}

Result<bool> prefix_test(const std::string& s, const Value& arg, bool suffix) {
  auto one = [&](const std::string& p) {
    if (p.size() > s.size()) return false;
    return suffix ? s.compare(s.size() - p.size(), p.size(), p) == 0 : s.compare(0, p.size(), p) == 0;
  };
  if (arg.is_string()) return one(arg.s);
  if (arg.is_list()) {
    for (const Value& p : *arg.list) {
      if (!p.is_string()) return type_error(suffix ? "endswith" : "startswith", p);
      if (one(p.s)) return true;
    }
    return false;
  }
  return type_error(std::string(suffix ? "endswith" : "startswith") + ": expected a string or a tuple of strings", arg);
}

// Resolves "a.b.c" on v (map's and selectattr's `attribute`).
Value attribute_path(const Value& v, const std::string& path) {
  Value cur = v;
  size_t i = 0;
  while (i <= path.size()) {
    const size_t j = std::min(path.find('.', i), path.size());
    const std::string key = path.substr(i, j - i);
    const Value* next = cur.is_mapping() ? cur.find(key) : nullptr;
    if (next == nullptr) return Value::undefined();
    cur = *next;
    i = j + 1;
  }
  return cur;
}

Result<Value> select_like(const std::string& name, const Value& input, const Args& args) {
  DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input, name.c_str()));
  const bool attr = name == "selectattr" || name == "rejectattr";
  const bool keep = name == "select" || name == "selectattr";
  size_t k = 0;
  std::string attribute;
  if (attr) {
    if (!args.get(0, "attribute").is_string()) return Status::invalid_argument(name + ": expected an attribute name");
    attribute = args.get(0, "attribute").s;
    k = 1;
  }
  Args test_args;
  for (size_t i = k + 1; i < args.positional.size(); ++i) test_args.positional.push_back(args.positional[i]);
  const Value test = k < args.positional.size() ? args.positional[k] : Value::undefined();
  if (!test.is_undefined() && !test.is_string()) return type_error(name + ": the test must be named by a string", test);
  List out;
  for (const Value& item : items) {
    const Value subject = attr ? attribute_path(item, attribute) : item;
    bool pass;
    if (test.is_undefined()) {
      pass = truthy(subject);
    } else {
      DI_ASSIGN_OR_RETURN(pass, apply_test(test.s, subject, test_args));
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::make_list(std::move(out));
}

}  // namespace

const Value& Args::get(size_t index, const char* name) const {
  for (const auto& [k, v] : keyword)
    if (k == name) return v;
  return index < positional.size() ? positional[index] : kUndefined;
}

Result<bool> contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) return type_error("'in <string>' requires a string on the left", item);
    return container.s.find(item.s) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : *container.list)
      if (equals(v, item)) return true;
    return false;
  }
  if (container.is_mapping()) return item.is_string() && container.find(item.s) != nullptr;
  if (container.is_undefined()) return false;
  return type_error("'in': expected a string, list or mapping on the right", container);
}

Result<Value> apply_filter(const std::string& name, const Value& in, const Args& args) {
  if (name == "trim") {
    if (!in.is_string()) return type_error("trim: expected a string", in);
    return Value::string(strip(in.s, args.get(0, "chars"), true, true));
  }
  if (name == "tojson") {
    JsonFormat f;
    const Value& indent = args.get(0, "indent");
    if (indent.kind == Value::Kind::kInt) f.indent = static_cast<int>(indent.i);
    else if (!indent.is_undefined() && !indent.is_none()) return type_error("tojson: indent must be an integer", indent);
    const Value& seps = args.get(99, "separators");
    if (seps.is_list() && seps.list->size() == 2 && (*seps.list)[0].is_string() && (*seps.list)[1].is_string()) {
      f.item_separator = (*seps.list)[0].s;
      f.key_separator = (*seps.list)[1].s;
    }
    f.sort_keys = truthy(args.get(99, "sort_keys"));
    return Value::string(to_json_text(in, f));
  }
  if (name == "length" || name == "count") {
    if (in.is_string()) return Value::integer(static_cast<int64_t>(in.s.size()));
    if (in.is_list()) return Value::integer(static_cast<int64_t>(in.list->size()));
    if (in.is_mapping()) return Value::integer(static_cast<int64_t>(in.map->size()));
    return type_error(name + ": expected a string, list or mapping", in);
  }
  if (name == "items") {
    if (in.is_undefined()) return Value::make_list();
    if (!in.is_mapping()) return type_error("items: expected a mapping", in);
    return items_of(in);
  }
  if (name == "join") {
    DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(in, "join"));
    const Value& sep = args.get(0, "d");
    const Value& attribute = args.get(1, "attribute");
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += sep.is_string() ? sep.s : "";
      out += to_output(attribute.is_string() ? attribute_path(items[i], attribute.s) : items[i]);
    }
    return Value::string(std::move(out));
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr")
    return select_like(name, in, args);
  if (name == "map") {
    DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(in, "map"));
    const Value& attribute = args.get(99, "attribute");
    List out;
    if (attribute.is_string()) {
      const Value& dflt = args.get(99, "default");
      for (const Value& v : items) {
        Value a = attribute_path(v, attribute.s);
        out.push_back(a.is_undefined() ? dflt : a);
      }
      return Value::make_list(std::move(out));
    }
    const Value& filter = args.get(0, "");
    if (!filter.is_string()) return Status::invalid_argument("map: expected attribute= or a filter name");
    Args rest;
    for (size_t i = 1; i < args.positional.size(); ++i) rest.positional.push_back(args.positional[i]);
    for (const Value& v : items) {
      DI_ASSIGN_OR_RETURN(Value mapped, apply_filter(filter.s, v, rest));
      out.push_back(std::move(mapped));
    }
    return Value::make_list(std::move(out));
  }
  if (name == "list") {
    DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(in, "list"));
    return Value::make_list(std::move(items));
  }
  if (name == "first" || name == "last") {
    DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(in, name.c_str()));
    if (items.empty()) return Value::undefined();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (in.is_string()) return Value::string(std::string(in.s.rbegin(), in.s.rend()));
    DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(in, "reverse"));
    std::reverse(items.begin(), items.end());
    return Value::make_list(std::move(items));
  }
  if (name == "lower" || name == "upper" || name == "capitalize" || name == "title") {
    if (!in.is_string()) return type_error(name + ": expected a string", in);
    if (name == "lower") return Value::string(lower(in.s));
    if (name == "upper") return Value::string(upper(in.s));
    if (name == "title") return Value::string(title_case(in.s));
    std::string s = lower(in.s);
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return Value::string(s);
  }
  if (name == "default" || name == "d") {
    const bool boolean = truthy(args.get(1, "boolean"));
    if (in.is_undefined() || (boolean && !truthy(in))) {
      const Value& d = args.get(0, "default_value");
      return d.is_undefined() ? Value::string("") : d;
    }
    return in;
  }
  if (name == "string") return Value::string(to_output(in));
  if (name == "safe") return in;
  if (name == "int") {
    if (in.kind == Value::Kind::kInt) return in;
    if (in.kind == Value::Kind::kFloat) return Value::integer(static_cast<int64_t>(in.f));
    if (in.kind == Value::Kind::kBool) return Value::integer(in.b ? 1 : 0);
    if (in.is_string()) {
      char* end = nullptr;
      const long long v = std::strtoll(in.s.c_str(), &end, 10);
      return Value::integer(end && *end == '\0' && !in.s.empty() ? v : 0);
    }
    return Value::integer(0);
  }
  if (name == "float") {
    if (in.kind == Value::Kind::kInt) return Value::number(static_cast<double>(in.i));
    if (in.kind == Value::Kind::kFloat) return in;
    if (in.is_string()) {
      char* end = nullptr;
      const double v = std::strtod(in.s.c_str(), &end);
      return Value::number(end && *end == '\0' && !in.s.empty() ? v : 0.0);
    }
    return Value::number(0.0);
  }
  if (name == "abs") {
    if (in.kind == Value::Kind::kInt) return Value::integer(in.i < 0 ? -in.i : in.i);
    if (in.kind == Value::Kind::kFloat) return Value::number(std::fabs(in.f));
    return type_error("abs: expected a number", in);
  }
  if (name == "replace") {
    if (!in.is_string()) return type_error("replace: expected a string", in);
    const Value& from = args.get(0, "old");
    const Value& to = args.get(1, "new");
    if (!from.is_string() || !to.is_string()) return Status::invalid_argument("replace: expected two strings");
    const Value& count = args.get(2, "count");
    return Value::string(replace_all(in.s, from.s, to.s, count.kind == Value::Kind::kInt ? count.i : -1));
  }
  return Status::unsupported("chat template: unsupported filter '" + name + "'");
}

Result<bool> apply_test(const std::string& name, const Value& v, const Args& args) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.kind == Value::Kind::kInt;
  if (name == "float") return v.kind == Value::Kind::kFloat;
  if (name == "boolean") return v.kind == Value::Kind::kBool;
  if (name == "true") return v.kind == Value::Kind::kBool && v.b;
  if (name == "false") return v.kind == Value::Kind::kBool && !v.b;
  if (name == "mapping") return v.kind == Value::Kind::kMapping;
  if (name == "iterable") return v.is_list() || v.is_mapping() || v.is_string();
  if (name == "sequence") return v.is_list() || v.is_string() || v.is_mapping();
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equals(v, args.get(0, "other"));
  if (name == "ne" || name == "!=") return !equals(v, args.get(0, "other"));
  if (name == "odd" || name == "even") {
    if (v.kind != Value::Kind::kInt) return type_error(name + ": expected an integer", v);
    return (v.i % 2 != 0) == (name == "odd");
  }
  if (name == "in") return contains(args.get(0, "seq"), v);
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    return v.s == (name == "lower" ? lower(v.s) : upper(v.s));
  }
  return Status::unsupported("chat template: unsupported test '" + name + "'");
}

Result<Value> call_method(const Value& o, const std::string& name, const Args& args) {
  if (o.is_string()) {
    const std::string& s = o.s;
    if (name == "startswith" || name == "endswith") {
      DI_ASSIGN_OR_RETURN(bool r, prefix_test(s, args.get(0, "prefix"), name == "endswith"));
      return Value::boolean(r);
    }
    if (name == "split") return split(s, args.get(0, "sep"), args.get(1, "maxsplit"));
    if (name == "strip") return Value::string(strip(s, args.get(0, "chars"), true, true));
    if (name == "lstrip") return Value::string(strip(s, args.get(0, "chars"), true, false));
    if (name == "rstrip") return Value::string(strip(s, args.get(0, "chars"), false, true));
    if (name == "lower") return Value::string(lower(s));
    if (name == "upper") return Value::string(upper(s));
    if (name == "title") return Value::string(title_case(s));
    if (name == "capitalize") return apply_filter("capitalize", o, {});
    if (name == "replace") return apply_filter("replace", o, args);
    if (name == "find") {
      const Value& sub = args.get(0, "sub");
      if (!sub.is_string()) return type_error("find: expected a string", sub);
      const size_t p = s.find(sub.s);
      return Value::integer(p == std::string::npos ? -1 : static_cast<int64_t>(p));
    }
    if (name == "join") {
      DI_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(args.get(0, "iterable"), "join"));
      std::string out;
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].is_string()) return type_error("join: expected strings", items[i]);
        if (i) out += s;
        out += items[i].s;
      }
      return Value::string(std::move(out));
    }
  } else if (o.kind == Value::Kind::kMapping) {
    if (name == "items") return items_of(o);
    if (name == "keys" || name == "values") {
      List out;
      for (const auto& [k, v] : *o.map) out.push_back(name == "keys" ? Value::string(k) : v);
      return Value::make_list(std::move(out));
    }
    if (name == "get") {
      const Value& key = args.get(0, "key");
      const Value* v = key.is_string() ? o.find(key.s) : nullptr;
      if (v) return *v;
      const Value& d = args.get(1, "default");
      return d.is_undefined() ? Value::none() : d;
    }
  }
  return Status::unsupported(std::string("chat template: unsupported method '") + name + "' on a " + kind_name(o.kind));
}

}  // namespace di::recipe::chat_template
