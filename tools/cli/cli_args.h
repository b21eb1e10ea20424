// Shared by `deepinfer render` and `deepinfer parse`: their command-line shape (options taking a
// value, switches, --help, usage errors) and reading their input from stdin or a file. Knows no
// command's own options or what they mean.
#pragma once

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <string>

namespace di::cli {

// One command-line option: `--name VALUE` into *value, or the switch `--name` setting *flag.
struct CliOption {
  const char* name;
  std::string* value = nullptr;
  bool* flag = nullptr;
};

// Prints "deepinfer <cmd>: <message>", a blank line and the usage to stderr; returns 2.
inline int cli_usage_error(const char* cmd, const std::string& message, const char* usage) {
  std::fprintf(stderr, "deepinfer %s: %s\n\n%s", cmd, message.c_str(), usage);
  return 2;
}

// Parses argv[1..] against `options`. Returns -1 to go on, or the exit code: 0 after printing
// `usage` for --help / -h, 2 for an unknown argument or an option missing its value.
inline int parse_cli_options(const char* cmd, int argc, char** argv, const char* usage,
                             std::initializer_list<CliOption> options) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    const CliOption* hit = nullptr;
    for (const CliOption& o : options)
      if (a == o.name) hit = &o;
    if (hit == nullptr) return cli_usage_error(cmd, "unknown argument '" + a + "'", usage);
    if (hit->flag != nullptr) {
      *hit->flag = true;
    } else if (i + 1 < argc) {
      *hit->value = argv[++i];
    } else {
      return cli_usage_error(cmd, a + " needs a value", usage);
    }
  }
  return -1;
}

inline std::string read_all_stdin() {
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

inline bool read_whole_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), {});
  return true;
}

}  // namespace di::cli
