// ConstraintSpec: the grammar a request's output must follow, as data — a kind and its source
// text (a JSON Schema, a regex or an EBNF grammar) plus the JSON options; an EBNF grammar may
// embed JSON Schemas its rules refer to and demand special tokens by id. Part of the typed request
// seam: the recipe (or a di_options caller) fills it and the engine's grammar compiler
// (engine/constrain) consumes it. A chat format's reply layout (DeepSeek's DSML tool calls) is
// written as such an EBNF grammar by the recipe (recipe/encoding/dsml_grammar.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace di::request {

enum class ConstraintKind : uint8_t {
  kJsonSchema,  // source: the schema as JSON text
  kJsonObject,  // any JSON object (response_format json_object); source unused
  kRegex,       // source: the pattern; the whole output must match
  kEbnf,        // source: the grammar text (see engine/constrain/ebnf_compiler.h), + schemas
};

enum class JsonWhitespace : uint8_t {
  kCompact,   // no whitespace between tokens (the canonical serialization)
  kFlexible,  // any JSON whitespace between tokens, at most max_whitespace bytes per run
};

struct JsonSchemaOptions {
  JsonWhitespace whitespace = JsonWhitespace::kFlexible;
  // Longest whitespace run in kFlexible; 0 = unbounded. A bound keeps a model from emitting
  // newlines forever where the schema allows any amount.
  uint32_t max_whitespace = 24;
  // Enforce `format` (date, uuid, ...). Draft 2020-12 makes format an annotation by default;
  // generation wants the assertion, so it is on unless turned off.
  bool assert_formats = true;
  // OpenAI strict mode: objects without additionalProperties allow no extra keys.
  bool strict = false;

  // The options as part of a compiled grammar's cache key.
  std::string cache_key() const {
    return std::to_string(int(whitespace)) + "/" + std::to_string(max_whitespace) + "/" + (strict ? "strict" : "lax") +
           (assert_formats ? "/fmt" : "");
  }
};

// A JSON Schema an EBNF grammar embeds: `%json(i)` / `%json(i, "/pointer")` match JSON the
// schema (or the part at the pointer) admits, `%raw_string(i, "/pointer")` the text of a string it
// admits, unquoted (see engine/constrain/ebnf_compiler.h).
struct EmbeddedSchema {
  std::string source;  // the schema as JSON text
  JsonSchemaOptions json;
};

struct ConstraintSpec {
  ConstraintKind kind = ConstraintKind::kJsonSchema;
  std::string source;
  JsonSchemaOptions json;
  std::vector<EmbeddedSchema> schemas;  // kEbnf: schemas[i] is what %json(i) refers to
};

}  // namespace di::request
