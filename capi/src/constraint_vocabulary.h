// The constraint vocabulary of a model served with a Hugging Face tokenizer: token bytes from the
// recipe's tokenizer, and its added and special tokens reachable only where a grammar names them
// by id (the recipe's chat grammars demand </think> and ｜DSML｜ that way). Header-only so the CLI
// (which links the internals, not capi's private objects) builds the same vocabulary as the engine.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/constrain/special_tokens.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::capi {

inline engine::constrain::ModelTokens model_tokens_from_tokenizer(const recipe::Tokenizer& tok, int64_t logits_width,
                                                                   const std::vector<int32_t>& eos_ids) {
  engine::constrain::ModelTokens t;
  t.bytes = tok.all_token_bytes();
  t.never.resize(t.bytes.size());
  t.special.resize(t.bytes.size());
  for (size_t id = 0; id < t.bytes.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    t.never[id] = !tok.is_valid_id(i);
    t.special[id] = tok.is_added(i) || tok.is_special(i);
  }
  for (int32_t e : eos_ids)
    if (e >= 0) t.eos_ids.push_back(static_cast<uint32_t>(e));
  t.logits_width = static_cast<uint32_t>(logits_width > 0 ? logits_width : tok.vocab_size());
  return t;
}

}  // namespace di::capi
