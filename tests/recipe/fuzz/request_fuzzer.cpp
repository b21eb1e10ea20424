// libFuzzer target for the request side of the recipe: arbitrary bytes as a Chat Completions,
// Responses or Anthropic Messages body (first byte picks the protocol and the prompt format),
// through parsing, validation, rendering and the context budget; and as a reference-encoder
// {"messages", "kwargs"} input. Must never crash, hang or leak; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "recipe/encoding/encoder.h"
#include "recipe/prepare/prepare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace di::recipe;
  if (size < 1) return 0;
  const uint8_t sel = data[0];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const Encoding enc = sel % 3 == 0 ? Encoding::kDsv4 : sel % 3 == 1 ? Encoding::kDsv41 : Encoding::kDsv32;
  if ((sel >> 2) % 4 == 3) {
    // Reference-encoder input: {"messages": [...], "kwargs": {...}}.
    auto j = ordered_json::parse(body.begin(), body.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("messages")) return 0;
    auto opts = parse_encode_kwargs(enc, j.contains("kwargs") ? j["kwargs"] : ordered_json::object());
    if (opts.is_ok()) (void)encode_messages(enc, j["messages"], *opts);
    return 0;
  }
  const Protocol p = (sel >> 2) % 4 == 0 ? Protocol::kChatCompletions
                     : (sel >> 2) % 4 == 1 ? Protocol::kResponses : Protocol::kMessages;
  RecipeConfig cfg;
  cfg.encoding = enc;
  cfg.context_length = 4096;
  cfg.image_policy = enc == Encoding::kDsv41 && (sel & 0x40) ? ImagePolicy::kVision
                                                              : ImagePolicy::kUnsupported;
  // A stand-in tokenizer (one id per byte) so the budget path runs too.
  PromptTokenizer tok = [](const RenderedPrompt& r) -> di::Result<TokenizedPrompt> {
    TokenizedPrompt t;
    for (const auto& s : r.segments) {
      uint32_t begin = static_cast<uint32_t>(t.ids.size());
      for (unsigned char c : s.text) t.ids.push_back(c);
      if (s.special) t.special_ranges.push_back({begin, static_cast<uint32_t>(t.ids.size())});
    }
    return t;
  };
  auto r = prepare(cfg, (sel & 0x80) ? tok : PromptTokenizer(), p, body);
  if (!r.is_ok()) {
    // Every rejection must carry a parseable error body.
    auto d = nlohmann::json::parse(r.status().detail(), nullptr, false);
    if (d.is_discarded() || !d.contains("body")) __builtin_trap();
  }
  return 0;
}
