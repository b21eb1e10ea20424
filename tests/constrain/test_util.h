// Helpers shared by the constraint tests: byte-level matching of a whole string against a
// grammar, and loading fixture files. No assertions here; tests decide what to check.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constrain/grammar.h"

namespace di::engine::constrain::testing {

// True when the whole of `text` is in the grammar's language (byte-level, no tokens).
bool full_match(const std::shared_ptr<const Grammar>& g, std::string_view text);

std::string read_file(const std::string& path);

// Every string over `alphabet` of at most `max_len` bytes, shortest first ("" included): the
// exhaustive inputs on which two grammars are compared.
std::vector<std::string> all_strings(const std::string& alphabet, size_t max_len);

}  // namespace di::engine::constrain::testing
