// Helpers shared by the constraint tests: byte-level matching of a whole string against a
// grammar (alone or against std::regex), and loading fixture files. No assertions here; tests
// decide what to check.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constrain/grammar.h"

namespace di::engine::constrain::testing {

// True when the whole of `text` is in the grammar's language (byte-level, no tokens).
bool full_match(const std::shared_ptr<const Grammar>& g, std::string_view text);

std::string read_file(const std::string& path);

// The ids 0..n-1 that a token bitmask (bit id % 32 of word id / 32) allows, in order.
std::vector<uint32_t> allowed_ids(const std::vector<uint32_t>& mask, uint32_t n);

// Every string over `alphabet` of at most `max_len` bytes, shortest first ("" included): the
// exhaustive inputs on which two grammars are compared.
std::vector<std::string> all_strings(const std::string& alphabet, size_t max_len);

// The first of all_strings(alphabet, max_len) on which the grammar and std::regex (ECMAScript,
// whole-string match) disagree; nullopt when they agree on every one.
std::optional<std::string> first_disagreement_with_std_regex(const std::shared_ptr<const Grammar>& g,
                                                             const std::string& regex,
                                                             const std::string& alphabet, size_t max_len);

}  // namespace di::engine::constrain::testing
