// `deepinfer logits`: one full forward over given token ids on the CPU; writes float32 logits
// [tokens, vocab] row-major to a file. For checking a model against a reference, not serving.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "tools/cli/cli_args.h"
#include "tools/cli/commands.h"
#include "tools/cli/token_ids_arg.h"

namespace di::cli {

namespace {

constexpr const char* kUsage =
    "usage: deepinfer logits --model DIR --ids 5,17,42 --out FILE [--threads N]\n"
    "  Runs the model over the ids in one forward and writes float32 logits\n"
    "  [tokens, vocab] row-major (little-endian) to FILE.\n";

}  // namespace

int cmd_logits(int argc, char** argv) {
  std::string model_dir, ids_text, out_path, threads_text;
  const int rc = parse_cli_options("logits", argc, argv, kUsage,
                                   {{"--model", &model_dir},
                                    {"--ids", &ids_text},
                                    {"--out", &out_path},
                                    {"--threads", &threads_text}});
  if (rc >= 0) return rc;
  const int32_t threads = std::atoi(threads_text.c_str());
  if (model_dir.empty() || ids_text.empty() || out_path.empty()) {
    std::fprintf(stderr, "deepinfer logits: --model, --ids and --out are required\n");
    return 2;
  }
  std::vector<int32_t> ids;
  std::string error;
  if (!parse_token_ids(ids_text, ids, error)) {
    std::fprintf(stderr, "deepinfer logits: --ids: %s\n", error.c_str());
    return 2;
  }
  engine::ModelOptions options;
  options.num_threads = threads;
  auto model = engine::load_model(model_dir, options);
  if (!model.is_ok()) {
    std::fprintf(stderr, "deepinfer logits: %s\n", model.status().message().c_str());
    return 1;
  }
  engine::ContiguousSequenceCache cache((*model)->cache_groups(), static_cast<int64_t>(ids.size()));
  engine::ForwardBatch batch;
  batch.seqs.push_back({ids.data(), static_cast<int32_t>(ids.size()), 0, &cache, true});
  std::vector<float> logits;
  const Status st = (*model)->forward(batch, logits);
  if (!st.is_ok()) {
    std::fprintf(stderr, "deepinfer logits: %s\n", st.message().c_str());
    return 2;
  }
  std::ofstream out(out_path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * 4));
  if (!out) {
    std::fprintf(stderr, "deepinfer logits: cannot write %s\n", out_path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace di::cli
