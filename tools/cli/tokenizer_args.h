// Shared by `deepinfer tokenize` and `deepinfer detokenize`: their argument parsing (--tokenizer
// PATH plus flag switches), loading the tokenizer through the C ABI, and the JSON Lines loop
// that turns each input line into an output line or an {"error": ...} line. Knows no command's
// own fields.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "deepinfer.h"

namespace di::cli {

// Loads `path`; on failure prints "deepinfer <cmd>: <message>" and returns NULL.
inline di_tokenizer* open_tokenizer(const char* cmd, const std::string& path) {
  di_tokenizer* tok = nullptr;
  di_error* err = nullptr;
  if (di_tokenizer_create(path.data(), path.size(), &tok, &err) != DI_OK) {
    std::fprintf(stderr, "deepinfer %s: %s\n", cmd, di_error_message(err));
    di_error_destroy(err);
    return nullptr;
  }
  return tok;
}

// Writes {"error": {"line": N, "message": ...}} for input line N.
inline void print_line_error(size_t line, const std::string& message) {
  nlohmann::json j = {{"error", {{"line", line}, {"message", message}}}};
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// A command-line switch that sets and/or clears bits of the command's flags.
struct FlagSwitch {
  const char* arg;
  uint32_t set = 0;
  uint32_t clear = 0;
};

// Parses `--tokenizer PATH` and `switches` into *path / *flags. Returns -1 to go on, or the
// exit code: 0 after printing `usage` for --help, 2 for a bad or missing argument.
inline int parse_tokenizer_args(const char* cmd, int argc, char** argv, const char* usage,
                                std::initializer_list<FlagSwitch> switches, std::string* path,
                                uint32_t* flags) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--tokenizer") && i + 1 < argc) {
      *path = argv[++i];
      continue;
    }
    const FlagSwitch* hit = nullptr;
    for (const FlagSwitch& s : switches)
      if (!std::strcmp(argv[i], s.arg)) hit = &s;
    if (hit == nullptr) {
      std::fprintf(stderr, "deepinfer %s: unexpected argument '%s' (see --help)\n", cmd, argv[i]);
      return 2;
    }
    *flags = (*flags & ~hit->clear) | hit->set;
  }
  if (path->empty()) {
    std::fprintf(stderr, "deepinfer %s: --tokenizer PATH is required\n", cmd);
    return 2;
  }
  return -1;
}

// Turns one parsed input line (discarded when it is not JSON) into its output line, or returns
// false with *error set.
using LineFn = std::function<bool(di_tokenizer* tok, const nlohmann::json& in, std::string* out,
                                  std::string* error)>;

// For a LineFn whose library call failed: moves the call's message into *error, frees it, and
// returns false.
inline bool take_error(di_error* err, std::string* error) {
  *error = di_error_message(err);
  di_error_destroy(err);
  return false;
}

// Loads the tokenizer and runs `fn` over the JSON Lines on stdin (empty lines skipped). Exit
// code: 0, or 1 when the tokenizer did not load or any line failed (the others still go
// through).
inline int run_json_lines(const char* cmd, const std::string& path, const LineFn& fn) {
  di_tokenizer* tok = open_tokenizer(cmd, path);
  if (!tok) return 1;
  std::string line, out, error;
  size_t n = 0;
  bool failed = false;
  while (std::getline(std::cin, line)) {
    ++n;
    if (line.empty()) continue;
    out.clear();
    if (!fn(tok, nlohmann::json::parse(line, nullptr, false), &out, &error)) {
      print_line_error(n, error);
      failed = true;
      continue;
    }
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  di_tokenizer_destroy(tok);
  return failed ? 1 : 0;
}

}  // namespace di::cli
