// EBNF compiler: a GBNF/Lark-like grammar text → Grammar. Knows nothing of tokens or JSON.
//
// Syntax (whitespace and newlines are free; '#' starts a comment to the end of the line):
//   rule      ::= NAME "::=" alternatives          (the start rule is named `root`)
//   alternatives: sequence ("|" sequence)*
//   sequence:  item*                                (empty = the empty string)
//   item:      primary ("*" | "+" | "?" | "{m}" | "{m,}" | "{m,n}")*
//   primary:   "literal" | 'literal'                (escapes \n \r \t \\ \" \' \xHH \uHHHH \U00HHHHHH)
//              | [a-z0-9_] | [^...]                 (a character class over code points)
//              | .                                  (any code point)
//              | /regex/                            (an ECMAScript-subset regex, whole match)
//              | NAME                               (a rule, [A-Za-z_][A-Za-z0-9_-]*)
//              | ( alternatives )
//              | <[ID]>                             (special token ID, decimal: only that token, never
//                                                    its text; see special_tokens.h)
//              | %json(I) | %json(I, "/pointer")    (JSON valid against embedded schema I, or against
//                                                    its part at the JSON Pointer; $refs resolve in I)
//              | %raw_string(I, "/pointer")         (a string that part admits, unquoted and unescaped;
//                                                    see json_raw_string.h)
// Rules may recurse, but not on the left (a rule reaching itself before any byte is an error).
// The embedded schemas come with the grammar (request::ConstraintSpec::schemas), each with its
// own JSON options; a grammar without them may use neither %json nor %raw_string.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/constrain/grammar.h"
#include "request/constraint_spec.h"

namespace di::engine::constrain {

Result<std::shared_ptr<const Grammar>> compile_ebnf(std::string_view text, const GrammarLimits& limits = {});
Result<std::shared_ptr<const Grammar>> compile_ebnf(std::string_view text,
                                                    const std::vector<di::request::EmbeddedSchema>& schemas,
                                                    const GrammarLimits& limits = {});

}  // namespace di::engine::constrain
