// The process-wide share of loaded tokenizers: every engine, recipe and tokenizer handle opened
// on the same unchanged tokenizer files uses one immutable Tokenizer instead of parsing them
// again. Holds only weak references (the last user frees it); knows nothing of who asks.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::recipe {

// As Tokenizer::load(path), but returns the Tokenizer already loaded from the same files while
// anyone still holds it. The files are identified by their canonical paths, sizes and
// modification times, so an edited tokenizer.json or tokenizer_config.json loads afresh.
// Thread-safe. Errors: as Tokenizer::load.
Result<std::shared_ptr<const Tokenizer>> load_shared_tokenizer(const std::string& path);

}  // namespace di::recipe
