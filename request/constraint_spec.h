// ConstraintSpec: the grammar a request's output must follow, as data — a kind and its source
// text (a JSON Schema, a regex, an EBNF grammar, or a chat reply spec) plus the JSON options. Part
// of the typed request seam: the recipe (or a di_options caller) fills it and the engine's grammar
// compiler (engine/constrain) consumes it.
#pragma once

#include <cstdint>
#include <string>

namespace di::request {

enum class ConstraintKind : uint8_t {
  kJsonSchema,  // source: the schema as JSON text
  kJsonObject,  // any JSON object (response_format json_object); source unused
  kRegex,       // source: the pattern; the whole output must match
  kEbnf,        // source: the grammar text (see engine/constrain/ebnf_compiler.h)
  kChatOutput,  // source: a chat reply spec as JSON (see engine/constrain/chat_output_grammar.h)
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

struct ConstraintSpec {
  ConstraintKind kind = ConstraintKind::kJsonSchema;
  std::string source;
  JsonSchemaOptions json;
};

}  // namespace di::request
