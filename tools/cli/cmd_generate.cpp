// `deepinfer generate`: greedy decoding of given prompt ids on the CPU, one sequence, printing
// the generated ids. Deliberately small: the engine's scheduler and sampler replace its loop.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "tools/cli/commands.h"
#include "tools/cli/token_ids_arg.h"

namespace di::cli {

int cmd_generate(int argc, char** argv) {
  std::string model_dir, ids_text;
  int64_t max_tokens = 16;
  double temperature = 0;
  bool json = false;
  int32_t threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: deepinfer generate --model DIR --prompt-ids 5,17,... [--max-tokens N]\n"
          "                          [--temperature 0] [--json] [--threads N]\n"
          "  Greedy decoding; stops after N tokens or at an eos id. Prints the generated ids\n"
          "  (space-separated, or {\"ids\": [...]} with --json).\n");
      return 0;
    }
    if (a == "--json") {
      json = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "deepinfer generate: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--model") model_dir = v;
    else if (a == "--prompt-ids") ids_text = v;
    else if (a == "--max-tokens") max_tokens = std::atoll(v.c_str());
    else if (a == "--temperature") temperature = std::atof(v.c_str());
    else if (a == "--threads") threads = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "deepinfer generate: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  if (model_dir.empty() || ids_text.empty()) {
    std::fprintf(stderr, "deepinfer generate: --model and --prompt-ids are required\n");
    return 2;
  }
  if (temperature != 0) {
    std::fprintf(stderr, "deepinfer generate: only greedy decoding (--temperature 0) is available\n");
    return 2;
  }
  if (max_tokens < 0) {
    std::fprintf(stderr, "deepinfer generate: --max-tokens must be >= 0\n");
    return 2;
  }
  std::vector<int32_t> ids;
  std::string error;
  if (!parse_token_ids(ids_text, ids, error)) {
    std::fprintf(stderr, "deepinfer generate: --prompt-ids: %s\n", error.c_str());
    return 2;
  }
  engine::ModelOptions options;
  options.num_threads = threads;
  auto loaded = engine::load_model(model_dir, options);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "deepinfer generate: %s\n", loaded.status().message().c_str());
    return 1;
  }
  engine::Model& model = **loaded;
  const auto& eos = model.info().eos_token_ids;
  engine::ContiguousSequenceCache cache(model.cache_groups(), static_cast<int64_t>(ids.size()) + max_tokens);
  std::vector<int32_t> generated;
  std::vector<float> logits;
  int64_t fed = 0;  // tokens already in the cache
  while (static_cast<int64_t>(generated.size()) < max_tokens) {
    engine::ForwardBatch batch;
    batch.seqs.push_back({ids.data() + fed, static_cast<int32_t>(ids.size() - fed), fed, &cache, false});
    const Status st = model.forward(batch, logits);
    if (!st.is_ok()) {
      std::fprintf(stderr, "deepinfer generate: %s\n", st.message().c_str());
      return 2;
    }
    fed = static_cast<int64_t>(ids.size());
    const int32_t next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    generated.push_back(next);
    ids.push_back(next);
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) break;
  }
  std::string text = json ? "{\"ids\": [" : "";
  for (size_t i = 0; i < generated.size(); ++i)
    text += (i ? (json ? ", " : " ") : "") + std::to_string(generated[i]);
  std::printf("%s%s\n", text.c_str(), json ? "]}" : "");
  return 0;
}

}  // namespace di::cli
