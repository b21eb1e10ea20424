// Shared by the constrain fuzz targets: a byte vocabulary (each byte one token, plus EOS) and the
// matcher invariants every compiled grammar must keep whatever the input. Test-only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constrain/compiled_grammar.h"
#include "engine/constrain/matcher.h"

namespace di::engine::constrain::fuzz {

inline std::shared_ptr<const TokenVocabulary> byte_vocab() {
  static const std::shared_ptr<const TokenVocabulary> v = [] {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.push_back(std::string(1, char(b)));
    t.push_back("");
    return std::make_shared<const TokenVocabulary>(TokenVocabulary::create(std::move(t), {256}, {}).value());
  }();
  return v;
}

// A fuzz input cut at its first `sep`: the grammar before it, the text after (none without one).
struct GrammarAndText {
  std::string grammar, text;
};
inline GrammarAndText split_input(const uint8_t* data, size_t size, char sep) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const size_t cut = in.find(sep);
  return {in.substr(0, cut), cut == std::string::npos ? "" : in.substr(cut + 1)};
}

inline void check(bool ok) {
  if (!ok) std::abort();
}

// Walks `text` byte by byte: the mask must agree with what accept_token does, EOS must be allowed
// exactly when the matcher can end, and rolling everything back must give the start state again.
inline void exercise(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  auto cg = std::make_shared<const CompiledGrammar>(g, byte_vocab());
  Matcher m(cg);
  std::vector<uint32_t> mask(cg->vocab().mask_words());
  const uint32_t start_allowed = m.fill_mask(mask.data());
  const std::vector<uint32_t> start_mask = mask;
  uint32_t steps = 0;
  for (size_t i = 0; i < text.size() && i < 256; ++i) {
    m.fill_mask(mask.data());
    const uint32_t b = uint8_t(text[i]);
    const bool allowed = (mask[b / 32] >> (b % 32)) & 1u;
    check(((mask[256 / 32] >> (256 % 32)) & 1u) == (m.can_end() ? 1u : 0u));
    const bool accepted = m.accept_token(b).is_ok();
    check(allowed == accepted);
    if (!accepted) break;
    ++steps;
  }
  check(m.rollback(steps).is_ok());
  check(m.fill_mask(mask.data()) == start_allowed && mask == start_mask);
  // All at once equals byte by byte.
  Matcher whole(cg);
  const std::string_view prefix = text.substr(0, steps);
  check(whole.accept_bytes(prefix).is_ok());
}

}  // namespace di::engine::constrain::fuzz
