// Shared by `deepinfer tokenize` and `deepinfer detokenize`: loading the tokenizer named by
// --tokenizer through the C ABI and reporting a failed line as JSON. Knows no command's flags.
#pragma once

#include <cstdio>
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

}  // namespace di::cli
