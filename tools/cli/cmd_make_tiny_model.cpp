// `deepinfer make-tiny-model`: writes the bundled tiny DeepSeek-V4 (random weights, fixed seed)
// and its derived tokenizer into a folder.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/cli/commands.h"
#include "tools/cli/tiny_model.h"

namespace di::cli {

int cmd_make_tiny_model(int argc, char** argv) {
  TinyModelOptions o;
  o.out_dir = default_tiny_model_dir();
  o.tokenizer_from = default_v3_tokenizer_dir();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: deepinfer make-tiny-model [--out DIR] [--seed N] [--tokenizer-from DIR]\n"
          "  Writes a tiny DeepSeek-V4 with RANDOM weights from seed N (default 0) to DIR\n"
          "  (default %s): config.json, model.safetensors, and a tokenizer.json derived from the\n"
          "  DeepSeek-V3 tokenizer in DIR given by --tokenizer-from (default %s)\n"
          "  plus the V4 added tokens.\n",
          default_tiny_model_dir().c_str(), default_v3_tokenizer_dir().c_str());
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "deepinfer make-tiny-model: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--out") {
      o.out_dir = v;
    } else if (a == "--seed") {
      char* end = nullptr;
      o.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') {
        std::fprintf(stderr, "deepinfer make-tiny-model: --seed: expected a non-negative integer, got '%s'\n", v.c_str());
        return 2;
      }
    } else if (a == "--tokenizer-from") {
      o.tokenizer_from = v;
    } else {
      std::fprintf(stderr, "deepinfer make-tiny-model: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  Status st = make_tiny_model(o);
  if (!st.is_ok()) {
    std::fprintf(stderr, "deepinfer make-tiny-model: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("wrote %s (random weights, seed %llu)\n", o.out_dir.c_str(), static_cast<unsigned long long>(o.seed));
  return 0;
}

}  // namespace di::cli
