// Loads the reference-encoder golden records (tests/fixtures/recipe/dsv-encoders/*.jsonl).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::recipe::testing {

inline std::vector<nlohmann::ordered_json> load_golden(const std::string& encoder) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe/dsv-encoders/" + encoder + ".jsonl");
  std::vector<nlohmann::ordered_json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::ordered_json::parse(line));
  }
  return out;
}

}  // namespace di::recipe::testing
