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
  const auto in = fuzz::split_input(data, size, '\0');
  auto g = compile_ebnf(in.grammar);
  if (g.is_ok()) fuzz::exercise(*g, in.text);
  return 0;
}
