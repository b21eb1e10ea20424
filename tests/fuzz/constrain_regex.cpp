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
  const std::string in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  const std::string pattern = in.substr(0, nl);
  const std::string text = nl == std::string::npos ? "" : in.substr(nl + 1);
  auto g = compile_regex(pattern);
  if (g.is_ok()) fuzz::exercise(*g, text);
  RegexOptions o;
  o.json_string = true;
  o.search = true;
  (void)regex_to_expr(pattern, o);
  return 0;
}
