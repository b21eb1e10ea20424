// `deepinfer tokenize`: JSON Lines {"text": ...} on stdin -> {"ids": [...]} on stdout, through
// the C ABI's tokenizer. A bad line gets an {"error": ...} line; the others still go through.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "tools/cli/commands.h"
#include "tools/cli/tokenizer_args.h"

namespace di::cli {

int cmd_tokenize(int argc, char** argv) {
  std::string path;
  uint32_t flags = DI_TOKENIZE_ADDED_TOKENS;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf(
          "usage: deepinfer tokenize --tokenizer PATH [--no-specials] [--add-special]\n"
          "  Reads JSON Lines {\"text\": \"...\"} on stdin, writes {\"ids\": [...]} per line.\n"
          "  PATH: a model directory or a tokenizer.json file.\n"
          "  --no-specials  encode added/special token text as plain text (user content)\n"
          "  --add-special  add the BOS/EOS the tokenizer's post-processor adds\n");
      return 0;
    }
    if (!std::strcmp(argv[i], "--tokenizer") && i + 1 < argc) path = argv[++i];
    else if (!std::strcmp(argv[i], "--no-specials")) flags &= ~DI_TOKENIZE_ADDED_TOKENS;
    else if (!std::strcmp(argv[i], "--add-special")) flags |= DI_TOKENIZE_ADD_SPECIAL;
    else {
      std::fprintf(stderr, "deepinfer tokenize: unexpected argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "deepinfer tokenize: --tokenizer PATH is required\n");
    return 2;
  }
  di_tokenizer* tok = open_tokenizer("tokenize", path);
  if (!tok) return 1;
  std::string line;
  size_t n = 0;
  bool failed = false;
  while (std::getline(std::cin, line)) {
    ++n;
    if (line.empty()) continue;
    nlohmann::json in = nlohmann::json::parse(line, nullptr, false);
    if (in.is_discarded() || !in.is_object() || !in.contains("text") || !in["text"].is_string()) {
      print_line_error(n, "expected a JSON object {\"text\": string}");
      failed = true;
      continue;
    }
    const std::string& text = in["text"].get_ref<const std::string&>();
    int32_t* ids = nullptr;
    size_t num = 0;
    di_error* err = nullptr;
    if (di_tokenizer_encode(tok, text.data(), text.size(), flags, &ids, &num, &err) != DI_OK) {
      print_line_error(n, di_error_message(err));
      di_error_destroy(err);
      failed = true;
      continue;
    }
    std::string out = "{\"ids\":[";
    for (size_t i = 0; i < num; ++i) {
      if (i) out += ',';
      out += std::to_string(ids[i]);
    }
    out += "]}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    di_free(ids);
  }
  di_tokenizer_destroy(tok);
  return failed ? 1 : 0;
}

}  // namespace di::cli
