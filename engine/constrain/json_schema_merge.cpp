// allOf merging, local $ref resolution and the assertion keyword list.
#include "engine/constrain/json_schema_merge.h"

#include <algorithm>
#include <set>
#include <vector>

namespace di::engine::constrain {

bool is_assertion_keyword(const std::string& k) {
  static const std::set<std::string> kAssertions = {
      "type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
      "propertyNames", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas",
      "dependencies", "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems",
      "contains", "minContains", "maxContains", "unevaluatedItems", "unevaluatedProperties", "pattern",
      "minLength", "maxLength", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
      "multipleOf", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef",
      "$recursiveRef", "nullable"};
  return kAssertions.count(k) > 0;
}

namespace {

std::vector<std::string> type_list(const ojson& t) {
  std::vector<std::string> out;
  if (t.is_string()) out.push_back(t.get<std::string>());
  if (t.is_array()) {
    for (auto& x : t) {
      if (x.is_string()) out.push_back(x.get<std::string>());
    }
  }
  return out;
}

ojson intersect_types(const ojson& a, const ojson& b) {
  auto ta = type_list(a), tb = type_list(b);
  auto has = [](const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  ojson out = ojson::array();
  for (const std::string& t : ta) {
    if (has(tb, t.c_str())) {
      out.push_back(t);
    } else if (t == "integer" && has(tb, "number")) {
      out.push_back("integer");
    } else if (t == "number" && has(tb, "integer")) {
      out.push_back("integer");
    }
  }
  return out;
}

const char* const kTakeMax[] = {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"};
const char* const kTakeMin[] = {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"};

bool in(const char* const* list, size_t n, const std::string& k) {
  for (size_t i = 0; i < n; ++i) {
    if (k == list[i]) return true;
  }
  return false;
}

}  // namespace

Result<ojson> merge_schemas(const ojson& a, const ojson& b, const std::string& path) {
  if (a.is_boolean()) return a.get<bool>() ? b : a;
  if (b.is_boolean()) return b.get<bool>() ? a : b;
  if (!a.is_object() || !b.is_object()) return Status::invalid_argument(path + ": a schema must be an object or a boolean");
  ojson r = a;
  for (auto it = b.begin(); it != b.end(); ++it) {
    const std::string& k = it.key();
    const ojson& v = it.value();
    if (k == "properties" || k == "additionalProperties") continue;  // below
    if (!r.contains(k)) {
      r[k] = v;
      continue;
    }
    if (r[k] == v) continue;
    if (!is_assertion_keyword(k)) continue;  // annotations: the first one wins
    if (k == "type") {
      r[k] = intersect_types(r[k], v);
    } else if (k == "required") {
      for (auto& x : v) {
        if (std::find(r[k].begin(), r[k].end(), x) == r[k].end()) r[k].push_back(x);
      }
    } else if (in(kTakeMax, 5, k) && r[k].is_number() && v.is_number()) {
      if (v.get<double>() > r[k].get<double>()) r[k] = v;
    } else if (in(kTakeMin, 5, k) && r[k].is_number() && v.is_number()) {
      if (v.get<double>() < r[k].get<double>()) r[k] = v;
    } else if (k == "enum" && r[k].is_array() && v.is_array()) {
      ojson both = ojson::array();
      for (auto& x : r[k]) {
        if (std::find(v.begin(), v.end(), x) != v.end()) both.push_back(x);
      }
      r[k] = both;
    } else if (k == "const") {
      r.erase("const");
      r["enum"] = ojson::array();  // two different constants: nothing satisfies both
    } else if (k == "items" && !r[k].is_array() && !v.is_array()) {
      DI_ASSIGN_OR_RETURN(r[k], merge_schemas(r[k], v, path + "/items"));
    } else if (k == "allOf" && r[k].is_array() && v.is_array()) {
      for (auto& x : v) r[k].push_back(x);
    } else if ((k == "anyOf" || k == "oneOf") && r[k].is_array() && v.is_array()) {
      if (r[k].size() * v.size() > 64) return Status::unsupported("json_schema: " + path + ": keyword '" + k + "' is not supported here (two lists too large to combine)");
      ojson prod = ojson::array();
      for (auto& x : r[k]) {
        for (auto& y : v) {
          DI_ASSIGN_OR_RETURN(ojson m, merge_schemas(x, y, path + "/" + k));
          prod.push_back(m);
        }
      }
      r[k] = prod;
    } else {
      return Status::unsupported("json_schema: " + path + ": keyword '" + k + "' is not supported with two different values in allOf");
    }
  }
  // items after prefixItems covers only the later elements; with the prefix on one side only the
  // two cannot become one schema.
  if (a.is_object() && b.is_object() && a.value("prefixItems", ojson()) != b.value("prefixItems", ojson()) &&
      ((a.contains("items") && !a.contains("prefixItems")) || (b.contains("items") && !b.contains("prefixItems")))) {
    return Status::unsupported("json_schema: " + path + ": keyword 'prefixItems' cannot be combined with 'items' of another allOf branch");
  }
  // Properties: a key one side does not list is governed by that side's additionalProperties.
  if (a.contains("properties") || b.contains("properties") || a.contains("additionalProperties") ||
      b.contains("additionalProperties")) {
    const ojson kTrue = true;
    const ojson empty = ojson::object();
    const ojson& pa = a.contains("properties") ? a["properties"] : empty;
    const ojson& pb = b.contains("properties") ? b["properties"] : empty;
    const ojson& apa = a.contains("additionalProperties") ? a["additionalProperties"] : kTrue;
    const ojson& apb = b.contains("additionalProperties") ? b["additionalProperties"] : kTrue;
    if (!pa.is_object() || !pb.is_object()) return Status::invalid_argument(path + "/properties: expected an object");
    ojson props = ojson::object();
    for (const ojson* side : {&pa, &pb}) {
      for (auto it = side->begin(); it != side->end(); ++it) {
        if (props.contains(it.key())) continue;
        const ojson& va = pa.contains(it.key()) ? pa[it.key()] : apa;
        const ojson& vb = pb.contains(it.key()) ? pb[it.key()] : apb;
        DI_ASSIGN_OR_RETURN(props[it.key()], merge_schemas(va, vb, path + "/properties/" + it.key()));
      }
    }
    if (!props.empty()) r["properties"] = props;
    if (a.contains("additionalProperties") || b.contains("additionalProperties")) {
      DI_ASSIGN_OR_RETURN(r["additionalProperties"], merge_schemas(apa, apb, path + "/additionalProperties"));
    }
  }
  return r;
}

namespace {

const ojson* find_anchor(const ojson& node, const std::string& name) {
  if (node.is_object()) {
    auto it = node.find("$anchor");
    if (it != node.end() && it->is_string() && it->get<std::string>() == name) return &node;
    for (auto& [k, v] : node.items()) {
      if (k == "enum" || k == "const") continue;
      if (const ojson* f = find_anchor(v, name)) return f;
    }
  } else if (node.is_array()) {
    for (auto& v : node) {
      if (const ojson* f = find_anchor(v, name)) return f;
    }
  }
  return nullptr;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(uint8_t(s[i + 1])) && std::isxdigit(uint8_t(s[i + 2]))) {
      out += char(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

Result<const ojson*> resolve_ref(const ojson& root, const std::string& ref, const std::string& path) {
  std::string r = ref;
  // A reference to the document's own $id is local.
  if (root.is_object() && root.contains("$id") && root["$id"].is_string()) {
    const std::string id = root["$id"].get<std::string>();
    if (!id.empty() && r.rfind(id, 0) == 0) r = r.substr(id.size());
    if (r.empty()) r = "#";
  }
  if (r.empty() || r[0] != '#') {
    return Status::unsupported("json_schema: " + path + ": keyword '$ref' is not supported for '" + ref + "' (only local references '#...')");
  }
  if (r == "#") return &root;
  if (r[1] != '/') {
    const ojson* a = find_anchor(root, r.substr(1));
    if (!a) return Status::unsupported("json_schema: " + path + ": keyword '$ref' is not supported ('" + ref + "' names no $anchor; dynamic anchors and $id scopes are not resolved)");
    return a;
  }
  const ojson* cur = &root;
  std::string rest = percent_decode(r.substr(1));
  size_t pos = 1;
  while (pos <= rest.size()) {
    size_t next = rest.find('/', pos);
    if (next == std::string::npos) next = rest.size();
    std::string tok = rest.substr(pos, next - pos);
    for (size_t i; (i = tok.find("~1")) != std::string::npos;) tok.replace(i, 2, "/");
    for (size_t i; (i = tok.find("~0")) != std::string::npos;) tok.replace(i, 2, "~");
    if (cur->is_object() && cur->contains(tok)) {
      cur = &(*cur)[tok];
    } else if (cur->is_array() && !tok.empty() && tok.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(tok) < cur->size()) {
      cur = &(*cur)[std::stoul(tok)];
    } else {
      return Status::unsupported("json_schema: " + path + ": keyword '$ref' is not supported ('" + ref + "' names no location in this document)");
    }
    pos = next + 1;
  }
  return cur;
}

}  // namespace di::engine::constrain
