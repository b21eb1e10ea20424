// `deepinfer info`: the library's version and build capabilities, straight from the C ABI.
#include <cstdio>
#include <cstring>

#include "deepinfer.h"
#include "tools/cli/commands.h"

namespace di::cli {

int cmd_info(int argc, char** argv) {
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::printf("usage: deepinfer info\n  Prints {\"version\", \"cuda\", ...} as one JSON line.\n");
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "deepinfer info: unexpected argument '%s'\n", argv[1]);
    return 2;
  }
  std::printf("%s\n", di_build_info());
  return 0;
}

}  // namespace di::cli
