// The constraint vocabulary of a model served with a Hugging Face tokenizer: token bytes from the
// recipe's tokenizer, added and special tokens excluded from grammars, and the chat control tokens
// (<think>, </think>, ｜DSML｜) given their grammar spellings. Header-only so the CLI (which links
// the internals, not capi's private objects) builds the same vocabulary as the engine.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/constrain/control_tokens.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::capi {

inline engine::constrain::ModelTokens model_tokens_from_tokenizer(const recipe::Tokenizer& tok, int64_t logits_width,
                                                                   const std::vector<int32_t>& eos_ids) {
  using engine::constrain::ControlToken;
  engine::constrain::ModelTokens t;
  t.bytes = tok.all_token_bytes();
  t.never.resize(t.bytes.size());
  for (size_t id = 0; id < t.bytes.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    t.never[id] = !tok.is_valid_id(i) || tok.is_added(i) || tok.is_special(i);
  }
  for (int32_t e : eos_ids)
    if (e >= 0) t.eos_ids.push_back(static_cast<uint32_t>(e));
  const std::pair<const char*, ControlToken> controls[] = {
      {"<think>", ControlToken::kThinkStart}, {"</think>", ControlToken::kThinkEnd}, {"｜DSML｜", ControlToken::kDsml}};
  for (const auto& [text, which] : controls) {
    if (auto id = tok.token_to_id(text); id && *id >= 0) t.controls.emplace_back(static_cast<uint32_t>(*id), which);
  }
  t.logits_width = static_cast<uint32_t>(logits_width > 0 ? logits_width : tok.vocab_size());
  return t;
}

}  // namespace di::capi
