// Special tokens inside grammars: a grammar may demand a special token by id (`<[id]>` in EBNF),
// e.g. a chat format's control token, and that token's text typed as ordinary tokens must not
// satisfy it (output parsers tell the two apart by id). Each special token is given reserved bytes
// (0xFF and its id) that no UTF-8 text contains, and every other token holding byte 0xFF is
// excluded, so only the token itself can spell them. Also builds a model's TokenVocabulary under
// that rule. Knows nothing of tokenizer files or of which tokens a chat format uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/constrain/token_vocabulary.h"

namespace di::engine::constrain {

// The bytes a grammar spells special token `id` with: 0xFF then the id in 4 bytes, big-endian
// (fixed length, so no reserved spelling is a prefix of another).
std::string special_token_bytes(uint32_t id);

struct ModelTokens {
  std::vector<std::string> bytes;  // bytes[id]: what token id decodes to
  std::vector<uint8_t> never;      // never[id] != 0: never allowed by a grammar (ids the tokenizer lacks)
  // special[id] != 0: allowed only where a grammar names it by id (the tokenizer's added and
  // special tokens); no text grammar reaches it.
  std::vector<uint8_t> special;
  std::vector<uint32_t> eos_ids;  // allowed exactly where the grammar may end
  uint32_t logits_width = 0;      // the model's vocab_size (>= bytes.size() after trimming)
};

// Ids at or past logits_width are dropped (the model can never sample them); special tokens get
// their reserved bytes (EOS keeps its role instead); other tokens holding 0xFF are excluded.
Result<TokenVocabulary> model_vocabulary(ModelTokens tokens);

}  // namespace di::engine::constrain
