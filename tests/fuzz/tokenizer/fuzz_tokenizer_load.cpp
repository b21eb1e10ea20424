// libFuzzer target: arbitrary bytes as tokenizer.json. Loading must give a tokenizer or an
// error, never a crash, hang or leak; a loaded tokenizer must encode and decode a fixed text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "recipe/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto t = di::recipe::Tokenizer::from_json(json);
  if (!t.is_ok()) return 0;
  for (bool recognize : {true, false}) {
    auto ids = (*t)->encode("Hello <s> wörld 12345 你好 \n\n  x", recognize);
    if (!ids.is_ok()) __builtin_trap();  // valid UTF-8 must always encode
    auto text = (*t)->decode(*ids, false);
    if (!text.is_ok()) __builtin_trap();  // ids it produced must decode
  }
  return 0;
}
