// `deepinfer detokenize`: JSON Lines {"ids": [...]} on stdin -> {"text": ...} on stdout, through
// the C ABI's tokenizer. A bad line gets an {"error": ...} line; the others still go through.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/tokenizer_args.h"

namespace di::cli {

int cmd_detokenize(int argc, char** argv) {
  std::string path;
  uint32_t flags = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf(
          "usage: deepinfer detokenize --tokenizer PATH [--skip-special]\n"
          "  Reads JSON Lines {\"ids\": [...]} on stdin, writes {\"text\": \"...\"} per line.\n"
          "  PATH: a model directory or a tokenizer.json file.\n"
          "  --skip-special  leave out tokens marked special (BOS, EOS, ...)\n");
      return 0;
    }
    if (!std::strcmp(argv[i], "--tokenizer") && i + 1 < argc) path = argv[++i];
    else if (!std::strcmp(argv[i], "--skip-special")) flags |= DI_DECODE_SKIP_SPECIAL;
    else {
      std::fprintf(stderr, "deepinfer detokenize: unexpected argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "deepinfer detokenize: --tokenizer PATH is required\n");
    return 2;
  }
  di_tokenizer* tok = open_tokenizer("detokenize", path);
  if (!tok) return 1;
  std::string line;
  size_t n = 0;
  bool failed = false;
  while (std::getline(std::cin, line)) {
    ++n;
    if (line.empty()) continue;
    nlohmann::json in = nlohmann::json::parse(line, nullptr, false);
    std::vector<int32_t> ids;
    bool ok = !in.is_discarded() && in.is_object() && in.contains("ids") && in["ids"].is_array();
    if (ok) {
      for (const auto& v : in["ids"]) {
        if (!v.is_number_integer() || v.get<int64_t>() < INT32_MIN || v.get<int64_t>() > INT32_MAX) {
          ok = false;
          break;
        }
        ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
      }
    }
    if (!ok) {
      print_line_error(n, "expected a JSON object {\"ids\": [integer, ...]}");
      failed = true;
      continue;
    }
    char* text = nullptr;
    size_t len = 0;
    di_error* err = nullptr;
    if (di_tokenizer_decode(tok, ids.data(), ids.size(), flags, &text, &len, &err) != DI_OK) {
      print_line_error(n, di_error_message(err));
      di_error_destroy(err);
      failed = true;
      continue;
    }
    nlohmann::json out = {{"text", std::string(text, len)}};
    di_free(text);
    std::printf("%s\n", out.dump().c_str());
  }
  di_tokenizer_destroy(tok);
  return failed ? 1 : 0;
}

}  // namespace di::cli
