// Control tokens inside grammars: a chat grammar must demand the `</think>` or DSML control token
// itself, not its text typed as ordinary tokens (the output parser tells them apart by id). Each
// such token is given reserved bytes (0xFF + a tag) that no UTF-8 text contains, and every other
// token holding byte 0xFF is excluded, so only the control token can spell them. Also builds a
// model's TokenVocabulary under that rule. Knows nothing of tokenizer files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/constrain/token_vocabulary.h"

namespace di::engine::constrain {

enum class ControlToken : uint8_t {
  kThinkStart = 1,  // `<think>`
  kThinkEnd = 2,    // `</think>`
  kDsml = 3,        // `｜DSML｜` (the brackets around it are ordinary text)
};

// The bytes a grammar spells `token` with.
std::string control_token_bytes(ControlToken token);

struct ModelTokens {
  std::vector<std::string> bytes;      // bytes[id]: what token id decodes to
  std::vector<uint8_t> never;          // never[id] != 0: never allowed by a grammar (added/special tokens)
  std::vector<uint32_t> eos_ids;       // allowed exactly where the grammar may end
  std::vector<std::pair<uint32_t, ControlToken>> controls;  // ids grammars may demand
  uint32_t logits_width = 0;           // the model's vocab_size (>= bytes.size() after trimming)
};

// Ids at or past logits_width are dropped (the model can never sample them); control tokens get
// their reserved bytes; other tokens holding 0xFF are excluded.
Result<TokenVocabulary> model_vocabulary(ModelTokens tokens);

}  // namespace di::engine::constrain
