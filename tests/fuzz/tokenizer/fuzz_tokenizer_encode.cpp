// libFuzzer target: arbitrary bytes as text for a real tokenizer (DI_FUZZ_TOKENIZER = model
// dir or tokenizer.json). Invalid UTF-8 must be an error; valid text must encode in both
// modes, decode back to itself (DI_FUZZ_ROUNDTRIP=1, tokenizers without a normalizer), and
// stream-decode to the same text one id at a time.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/utf8.h"
#include "recipe/tokenizer/stream_decoder.h"
#include "recipe/tokenizer/tokenizer.h"

namespace {
std::shared_ptr<const di::recipe::Tokenizer> g_tokenizer;
bool g_roundtrip = false;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* path = std::getenv("DI_FUZZ_TOKENIZER");
  if (!path) {
    std::fprintf(stderr, "set DI_FUZZ_TOKENIZER to a model directory or tokenizer.json\n");
    std::exit(2);
  }
  auto t = di::recipe::Tokenizer::load(path);
  if (!t.is_ok()) {
    std::fprintf(stderr, "%s\n", t.status().message().c_str());
    std::exit(2);
  }
  g_tokenizer = *t;
  g_roundtrip = std::getenv("DI_FUZZ_ROUNDTRIP") && std::string(std::getenv("DI_FUZZ_ROUNDTRIP")) == "1";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool valid = di::utf8_valid(text);
  for (bool recognize : {true, false}) {
    auto ids = g_tokenizer->encode(text, recognize);
    if (ids.is_ok() != valid) __builtin_trap();
    if (!valid) continue;
    auto back = g_tokenizer->decode(*ids, false);
    if (!back.is_ok()) __builtin_trap();
    if (g_roundtrip && *back != text) __builtin_trap();
    di::recipe::StreamDecoder stream(g_tokenizer);
    std::string streamed;
    for (int32_t id : *ids) streamed += *stream.push(id);
    streamed += stream.finish();
    if (streamed != *back) __builtin_trap();
  }
  return 0;
}
