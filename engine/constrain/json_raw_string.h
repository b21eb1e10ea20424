// The strings a JSON Schema admits, written raw: the characters of the string value itself, with
// no quotes and no escapes. Chat formats whose tool calls write string arguments verbatim between
// markup use it through EBNF's %raw_string.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/constrain/grammar.h"
#include "engine/constrain/json_schema_compiler.h"

namespace di::engine::constrain {

// The raw spellings of the strings `schema` (a part of `rules`' root, at `path`) admits: const and
// enum strings, anyOf / oneOf branches, a pattern, min/maxLength, or any text when the schema does
// not restrict strings. A subset where exactness would need more (a pattern with lengths, format,
// allOf, assertions beside anyOf): nothing() then, and the caller offers the JSON form instead.
// nothing() too for a schema that admits no string.
Result<ExprPtr> raw_string_expr(JsonSchemaRules& rules, const nlohmann::ordered_json& schema, const std::string& path);

}  // namespace di::engine::constrain
