// Regex compiler: the ECMAScript subset JSON Schema `pattern` uses (alternation, groups, classes,
// \d \w \s, quantifiers, ^/$ at the ends) → Expr. Lookaround, backreferences, word boundaries
// and \p{..} are rejected with an error naming them. Knows nothing of JSON Schema keywords.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "engine/constrain/grammar.h"

namespace di::engine::constrain {

struct RegexOptions {
  // Match characters as they are spelled inside a JSON string literal (escaped where needed).
  bool json_string = false;
  // JSON Schema semantics: the pattern may match anywhere unless anchored with ^ / $; the
  // unanchored ends then take any characters. When false the whole input must match.
  bool search = false;
};

Result<ExprPtr> regex_to_expr(std::string_view pattern, const RegexOptions& options = {});

// A grammar whose language is the strings fully matching `pattern` (raw UTF-8 output).
// `limits` bound the compile (GrammarLimits); a refusal over the work budget names the offset of
// the repetition most of the automaton came from.
Result<std::shared_ptr<const Grammar>> compile_regex(std::string_view pattern, const GrammarLimits& limits = {});

}  // namespace di::engine::constrain
