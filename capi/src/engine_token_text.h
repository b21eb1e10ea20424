// The engine's TokenText backed by the recipe's Tokenizer: lets the engine stream text and
// match stop strings without engine/ ever including recipe/. Only capi/ and tools/ use it.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "engine/output/token_text.h"

namespace di::recipe {
class Tokenizer;
}

namespace di::capi {

// Adapts a loaded tokenizer.
std::shared_ptr<const engine::TokenText> make_token_text(std::shared_ptr<const recipe::Tokenizer> tokenizer);

// Loads `model_dir`/tokenizer.json when it exists; nullptr (not an error) when there is none.
Result<std::shared_ptr<const recipe::Tokenizer>> load_engine_tokenizer(const std::string& model_dir);
Result<std::shared_ptr<const engine::TokenText>> load_engine_token_text(const std::string& model_dir);

}  // namespace di::capi
