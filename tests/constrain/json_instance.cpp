// InstanceWriter: schema-ordered serialization of test instances.
#include "tests/constrain/json_instance.h"

#include <algorithm>
#include <vector>

namespace di::engine::constrain::testing {

InstanceWriter::InstanceWriter(const ojson& schema) { rank_keys(schema); }

void InstanceWriter::rank_keys(const ojson& node) {
  if (node.is_object()) {
    if (node.contains("properties") && node["properties"].is_object()) {
      for (auto it = node["properties"].begin(); it != node["properties"].end(); ++it) rank_.emplace(it.key(), rank_.size());
    }
    if (node.contains("required") && node["required"].is_array()) {
      for (auto& k : node["required"]) {
        if (k.is_string()) rank_.emplace(k.get<std::string>(), rank_.size());
      }
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() != "enum" && it.key() != "const") rank_keys(it.value());
    }
  } else if (node.is_array()) {
    for (auto& v : node) rank_keys(v);
  }
}

std::string InstanceWriter::write(const ojson& instance, int indent) const {
  std::string out;
  write(instance, indent, 0, out);
  return out;
}

void InstanceWriter::write(const ojson& v, int indent, int level, std::string& out) const {
  auto newline = [&](int lv) {
    if (indent < 0) return;
    out += '\n';
    out.append(size_t(indent * lv), ' ');
  };
  if (v.is_object()) {
    std::vector<std::pair<std::string, const ojson*>> items;
    for (auto it = v.begin(); it != v.end(); ++it) items.push_back({it.key(), &it.value()});
    std::stable_sort(items.begin(), items.end(), [&](auto& a, auto& b) {
      auto ra = rank_.find(a.first), rb = rank_.find(b.first);
      size_t xa = ra == rank_.end() ? SIZE_MAX : ra->second, xb = rb == rank_.end() ? SIZE_MAX : rb->second;
      return xa < xb;
    });
    out += '{';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ',';
      newline(level + 1);
      out += ojson(items[i].first).dump();
      out += indent < 0 ? ":" : ": ";
      write(*items[i].second, indent, level + 1, out);
    }
    if (!items.empty()) newline(level);
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      newline(level + 1);
      write(v[i], indent, level + 1, out);
    }
    if (!v.empty()) newline(level);
    out += ']';
  } else {
    out += v.dump();
  }
}

}  // namespace di::engine::constrain::testing
