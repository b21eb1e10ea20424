// InstanceWriter: schema-ordered serialization of test instances.
#include "tests/constrain/json_instance.h"

#include <algorithm>
#include <vector>

namespace di::engine::constrain::testing {

InstanceWriter::InstanceWriter(const ojson& schema) { collect(schema); }

void InstanceWriter::collect(const ojson& node) {
  if (node.is_object()) {
    if (node.contains("properties") && node["properties"].is_object()) {
      std::vector<std::string> order;
      for (auto it = node["properties"].begin(); it != node["properties"].end(); ++it) order.push_back(it.key());
      if (node.contains("required") && node["required"].is_array()) {
        for (auto& k : node["required"]) {
          if (k.is_string() && std::find(order.begin(), order.end(), k.get<std::string>()) == order.end()) {
            order.push_back(k.get<std::string>());
          }
        }
      }
      orders_.push_back(std::move(order));
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() != "enum" && it.key() != "const") collect(it.value());
    }
  } else if (node.is_array()) {
    for (auto& v : node) collect(v);
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
    // The declared order that covers most of these keys (the smaller list on a tie).
    const std::vector<std::string>* best = nullptr;
    size_t best_hits = 0;
    for (const auto& order : orders_) {
      size_t hits = 0;
      for (auto& [k, _] : items) hits += std::find(order.begin(), order.end(), k) != order.end();
      if (hits > best_hits || (hits == best_hits && hits > 0 && order.size() < best->size())) {
        best = &order;
        best_hits = hits;
      }
    }
    auto rank = [&](const std::string& k) -> size_t {
      if (!best) return SIZE_MAX;
      auto it = std::find(best->begin(), best->end(), k);
      return it == best->end() ? SIZE_MAX : size_t(it - best->begin());
    };
    std::stable_sort(items.begin(), items.end(), [&](auto& a, auto& b) { return rank(a.first) < rank(b.first); });
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
