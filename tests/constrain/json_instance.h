// Serializes test instances the way a generator under our JSON Schema grammar writes them: keys
// of each object in the order the schema declares them (first occurrence of the name in any
// `properties`, then `required`), compact or indented. Test-only.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace di::engine::constrain::testing {

using ojson = nlohmann::ordered_json;

class InstanceWriter {
 public:
  explicit InstanceWriter(const ojson& schema);
  // indent < 0: compact; otherwise newlines and `indent` spaces per level.
  std::string write(const ojson& instance, int indent = -1) const;

 private:
  void rank_keys(const ojson& node);
  void write(const ojson& v, int indent, int level, std::string& out) const;
  std::map<std::string, size_t> rank_;
};

}  // namespace di::engine::constrain::testing
