// `deepinfer make-tiny-model`: writes the bundled tiny DeepSeek-V4 (random weights, fixed seed)
// and its derived tokenizer into a folder.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/cli/cli_args.h"
#include "tools/cli/commands.h"
#include "tools/cli/tiny_model.h"

namespace di::cli {

int cmd_make_tiny_model(int argc, char** argv) {
  TinyModelOptions o;
  o.out_dir = default_tiny_model_dir();
  o.tokenizer_from = default_v3_tokenizer_dir();
  // The defaults depend on where the binary runs from, so the usage is made here.
  const std::string usage =
      "usage: deepinfer make-tiny-model [--out DIR] [--seed N] [--tokenizer-from DIR]\n"
      "  Writes a tiny DeepSeek-V4 with RANDOM weights from seed N (default 0) to DIR\n"
      "  (default " + o.out_dir + "): config.json, model.safetensors, and a tokenizer.json derived from the\n"
      "  DeepSeek-V3 tokenizer in DIR given by --tokenizer-from (default " + o.tokenizer_from + ")\n"
      "  plus the V4 added tokens.\n";
  std::string seed = std::to_string(o.seed);
  const int rc = parse_cli_options("make-tiny-model", argc, argv, usage.c_str(),
                                   {{"--out", &o.out_dir},
                                    {"--seed", &seed},
                                    {"--tokenizer-from", &o.tokenizer_from}});
  if (rc >= 0) return rc;
  char* end = nullptr;
  o.seed = std::strtoull(seed.c_str(), &end, 10);
  if (seed.empty() || *end != '\0') {
    std::fprintf(stderr, "deepinfer make-tiny-model: --seed: expected a non-negative integer, got '%s'\n",
                 seed.c_str());
    return 2;
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
