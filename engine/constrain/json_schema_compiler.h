// JSON Schema (draft 2020-12, plus the draft-4/7 spellings real schemas use) → Grammar. Supported:
// type, properties, required, additionalProperties, enum, const, anyOf, oneOf (provably exclusive
// branches), allOf (mergeable branches), $ref/$defs (local), items, prefixItems, min/maxItems,
// pattern, min/maxLength, format (date, time, date-time, duration, uuid, ipv4, ipv6, email,
// hostname, uri, uri-reference, json-pointer, relative-json-pointer, uri-template; regex, iri,
// iri-reference, idn-email and idn-hostname are refused while formats are asserted),
// minimum/maximum/exclusive*, multipleOf 1 on integers, nullable. Any other assertion keyword is
// an error naming it, never silently ignored. Does not know tokens or matchers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/constrain/grammar.h"
#include "request/constraint_spec.h"

namespace di::engine::constrain {

// The options live in the request seam (request/constraint_spec.h), which callers fill.
using di::request::JsonSchemaOptions;
using di::request::JsonWhitespace;

// Properties are generated in the schema's `properties` order (required or not); extra keys, when
// allowed, come after them.
// `limits` bound the compile (GrammarLimits; refusals are kLimit).
Result<std::shared_ptr<const Grammar>> compile_json_schema(const nlohmann::ordered_json& schema,
                                                           const JsonSchemaOptions& options = {},
                                                           const GrammarLimits& limits = {});
Result<std::shared_ptr<const Grammar>> compile_json_schema_text(std::string_view schema_text,
                                                           const JsonSchemaOptions& options = {},
                                                           const GrammarLimits& limits = {});

// JSON Schema rules added to a grammar under construction, for grammars that embed JSON values
// (tool-call arguments inside markup). `root` anchors local $refs and must outlive this object.
class JsonSchemaRules {
 public:
  JsonSchemaRules(GrammarBuilder& builder, const nlohmann::ordered_json& root, const JsonSchemaOptions& options);
  ~JsonSchemaRules();
  // A rule matching the JSON text of any instance valid against `schema` (a part of root).
  Result<uint32_t> rule(const nlohmann::ordered_json& schema, const std::string& path);
  // `schema` with a top-level $ref replaced by its target (merged with the siblings).
  Result<nlohmann::ordered_json> resolve(const nlohmann::ordered_json& schema, const std::string& path);
  uint32_t any_value() const;
  uint32_t any_object() const;

  class Compiler;

 private:
  std::unique_ptr<Compiler> c_;
};

// Any JSON value (the json_object response format), with the same whitespace policy.
Result<std::shared_ptr<const Grammar>> compile_any_json(const JsonSchemaOptions& options = {}, bool object_only = false,
                                                        const GrammarLimits& limits = {});

}  // namespace di::engine::constrain
