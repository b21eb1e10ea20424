// Special-token spellings and the model vocabulary built around them.
#include "engine/constrain/special_tokens.h"

#include <algorithm>

namespace di::engine::constrain {

std::string special_token_bytes(uint32_t id) {
  std::string s(1, '\xFF');
  for (int shift = 24; shift >= 0; shift -= 8) s += char((id >> shift) & 0xFF);
  return s;
}

Result<TokenVocabulary> model_vocabulary(ModelTokens t) {
  if (t.logits_width == 0) return Status::invalid_argument("vocabulary: logits_width must be > 0");
  const size_t n = std::min<size_t>(t.bytes.size(), t.logits_width);
  t.bytes.resize(n);
  t.never.resize(n, 0);
  t.special.resize(n, 0);
  std::vector<uint32_t> eos;
  for (uint32_t id : t.eos_ids) {
    if (id < n) eos.push_back(id);
  }
  auto is_eos = [&](uint32_t id) { return std::find(eos.begin(), eos.end(), id) != eos.end(); };
  std::vector<uint32_t> excluded;
  for (uint32_t id = 0; id < n; ++id) {
    if (is_eos(id)) continue;
    if (t.never[id]) {
      excluded.push_back(id);
    } else if (t.special[id]) {
      t.bytes[id] = special_token_bytes(id);
    } else if (t.bytes[id].find('\xFF') != std::string::npos) {
      excluded.push_back(id);
    }
  }
  return TokenVocabulary::create(std::move(t.bytes), std::move(eos), std::move(excluded), t.logits_width);
}

}  // namespace di::engine::constrain
