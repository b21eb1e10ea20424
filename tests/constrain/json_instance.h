// Serializes test instances the way a generator under our JSON Schema grammar writes them: the
// keys of each object in the order of the schema's `properties` (then `required`) list that best
// covers them, other keys last; compact or indented. Test-only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::engine::constrain::testing {

using ojson = nlohmann::ordered_json;

class InstanceWriter {
 public:
  explicit InstanceWriter(const ojson& schema);
  // indent < 0: compact; otherwise newlines and `indent` spaces per level.
  std::string write(const ojson& instance, int indent = -1) const;

 private:
  void collect(const ojson& node);
  void write(const ojson& v, int indent, int level, std::string& out) const;
  std::vector<std::vector<std::string>> orders_;  // one per `properties` object in the schema
};

}  // namespace di::engine::constrain::testing
