// Helpers shared by the constraint tests.
#include "tests/constrain/test_util.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "engine/constrain/pda.h"

namespace di::engine::constrain::testing {

bool full_match(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  Pda pda(*g);
  FramePool pool;
  std::vector<StackTop> cur, next;
  bool end = pda.start(pool, cur);
  for (char c : text) {
    if (cur.empty()) return false;
    end = pda.step(pool, cur, uint8_t(c), next);
    std::swap(cur, next);
  }
  return end;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<uint32_t> allowed_ids(const std::vector<uint32_t>& mask, uint32_t n) {
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < n; ++id)
    if (mask[id >> 5] >> (id & 31) & 1) ids.push_back(id);
  return ids;
}

std::vector<std::string> all_strings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out = {""};
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].size() == max_len) continue;
    for (char c : alphabet) out.push_back(out[i] + c);
  }
  return out;
}

std::optional<std::string> first_disagreement_with_std_regex(const std::shared_ptr<const Grammar>& g,
                                                             const std::string& regex,
                                                             const std::string& alphabet, size_t max_len) {
  const std::regex ref(regex, std::regex::ECMAScript);
  for (const std::string& s : all_strings(alphabet, max_len))
    if (full_match(g, s) != std::regex_match(s, ref)) return s;
  return std::nullopt;
}

}  // namespace di::engine::constrain::testing
