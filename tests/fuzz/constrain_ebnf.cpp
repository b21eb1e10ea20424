// libFuzzer target: the EBNF compiler. The input up to a NUL byte is the grammar, the rest a text.
// Invariants: no crash, hang or leak; refusals are error values; compiled grammars keep the matcher
// invariants (constrain_fuzz_util.h) on the text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/constrain/ebnf_compiler.h"
#include "tests/fuzz/constrain_fuzz_util.h"

using namespace di::engine::constrain;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const size_t cut = in.find('\0');
  const std::string grammar = in.substr(0, cut);
  const std::string text = cut == std::string::npos ? "" : in.substr(cut + 1);
  auto g = compile_ebnf(grammar);
  if (g.is_ok()) fuzz::exercise(*g, text);
  return 0;
}
