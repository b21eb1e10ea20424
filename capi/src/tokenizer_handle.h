// The di_tokenizer handle: a shared reference to an immutable recipe Tokenizer, so other parts
// of the C ABI (recipe, engine) can hold the same tokenizer without copying it.
#pragma once

#include <memory>

#include "recipe/tokenizer/tokenizer.h"

struct di_tokenizer {
  std::shared_ptr<const di::recipe::Tokenizer> tokenizer;
};
