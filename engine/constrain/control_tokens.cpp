// Control-token aliases and the model vocabulary built around them.
#include "engine/constrain/control_tokens.h"

namespace di::engine::constrain {

std::string control_token_bytes(ControlToken token) {
  return std::string(1, '\xFF') + char(static_cast<uint8_t>(token));
}

Result<TokenVocabulary> model_vocabulary(ModelTokens t) {
  if (t.logits_width == 0) return Status::invalid_argument("vocabulary: logits_width must be > 0");
  const size_t n = std::min<size_t>(t.bytes.size(), t.logits_width);
  t.bytes.resize(n);
  t.never.resize(n, 0);
  std::vector<uint32_t> excluded;
  std::vector<uint8_t> is_control(n, 0);
  for (const auto& [id, which] : t.controls) {
    if (id >= n) continue;  // the model cannot produce it; grammars that demand it dead-end
    t.bytes[id] = control_token_bytes(which);
    is_control[id] = 1;
  }
  std::vector<uint32_t> eos;
  for (uint32_t id : t.eos_ids) {
    if (id < n) eos.push_back(id);
  }
  for (uint32_t id = 0; id < n; ++id) {
    if (is_control[id]) continue;
    bool skip = t.never[id] != 0 || t.bytes[id].find('\xFF') != std::string::npos;
    for (uint32_t e : eos) skip = skip && e != id;
    if (skip) excluded.push_back(id);
  }
  return TokenVocabulary::create(std::move(t.bytes), std::move(eos), std::move(excluded), t.logits_width);
}

}  // namespace di::engine::constrain
