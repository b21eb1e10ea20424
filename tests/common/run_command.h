// Running the CLI from a test: a shell command line, its exit status and its standard output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace di_test {

// Runs `line` with /bin/sh; stores its standard output in *out and returns its exit status, or
// -1 when it could not start or did not exit normally.
inline int run_command(const std::string& line, std::string* out) {
  out->clear();
  FILE* p = popen(line.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace di_test
