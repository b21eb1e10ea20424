// Schema-level helpers for the JSON Schema compiler: allOf merging (intersection of two schemas
// as one schema), local $ref resolution, and which keywords are annotations. Works on JSON only;
// never builds grammar.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace di::engine::constrain {

using ojson = nlohmann::ordered_json;

// The schema that accepts exactly what both accept, or an error naming the keyword that cannot
// be combined. Boolean schemas are allowed.
Result<ojson> merge_schemas(const ojson& a, const ojson& b, const std::string& path);

// Resolves a local reference ("#", "#/json/pointer", "#anchor") inside `root`.
Result<const ojson*> resolve_ref(const ojson& root, const std::string& ref, const std::string& path);

// Keywords that carry no assertion (and keywords we do not know, which JSON Schema ignores).
bool is_assertion_keyword(const std::string& key);

}  // namespace di::engine::constrain
