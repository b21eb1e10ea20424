// libFuzzer target: the regex compiler. The input's first line is the pattern, the rest a text.
// Invariants: no crash, hang or leak; refusals are error values; compiled grammars keep the matcher
// invariants (constrain_fuzz_util.h) on the text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/constrain/regex_compiler.h"
#include "tests/fuzz/constrain_fuzz_util.h"

using namespace di::engine::constrain;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto in = fuzz::split_input(data, size, '\n');
  auto g = compile_regex(in.grammar);
  if (g.is_ok()) fuzz::exercise(*g, in.text);
  RegexOptions o;
  o.json_string = true;
  o.search = true;
  (void)regex_to_expr(in.grammar, o);
  return 0;
}
