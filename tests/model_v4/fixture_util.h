// The deepseek_v4 tests' fixtures (tests/fixtures/model_v4/<name>/, made with transformers),
// named by their folder alone, and their scratch area; the shared fixture machinery lives in
// tests/common/model_fixture.h.
#pragma once

#include <string>
#include <vector>

#include "tests/common/model_fixture.h"

namespace di::test {

inline const std::vector<std::string>& fixture_names() {
  static const std::vector<std::string> kNames = {"mixed_yarn_hc2", "hca_csa_hc3_clip",
                                                  "odd_rates_hc4", "real_rates_long"};
  return kNames;
}

inline FixtureId v4_fixture(const std::string& name) { return {"v4", name}; }
inline std::vector<FixtureId> v4_fixtures() {
  std::vector<FixtureId> ids;
  for (const std::string& name : fixture_names()) ids.push_back(v4_fixture(name));
  return ids;
}
inline std::string fixture_dir(const std::string& name) { return fixture_dir(v4_fixture(name)); }
inline Fixture load_fixture(const std::string& name) { return load_fixture(v4_fixture(name)); }
inline json read_config(const std::string& name) { return read_config(v4_fixture(name)); }
inline std::string scratch_dir(const std::string& name) { return scratch_dir_in("model_v4", name); }

// A scratch model directory with `tensors` and fixture `name`'s config.json (or `config`).
inline std::string make_model_dir(const std::string& scratch, const std::string& name,
                                  const std::vector<RawTensor>& tensors, const json* config = nullptr) {
  return make_model_dir_in("model_v4", scratch, config ? *config : read_config(name), tensors);
}

}  // namespace di::test
