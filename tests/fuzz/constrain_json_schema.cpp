// libFuzzer target: the JSON Schema compiler, and the same schema embedded in an EBNF grammar the
// way a chat reply grammar embeds a strict tool's parameters (%json, %raw_string per property,
// after a special token). Invariants: no crash, hang or leak; a refused schema is an error value; a
// compiled one keeps the matcher invariants (constrain_fuzz_util.h) on the input's own bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/constrain/ebnf_compiler.h"
#include "engine/constrain/json_schema_compiler.h"
#include "tests/fuzz/constrain_fuzz_util.h"

using namespace di::engine::constrain;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto schema = nlohmann::ordered_json::parse(text, nullptr, false);
  if (schema.is_discarded()) return 0;
  JsonSchemaOptions o;
  o.whitespace = size % 2 ? JsonWhitespace::kCompact : JsonWhitespace::kFlexible;
  o.max_whitespace = 4;
  auto g = compile_json_schema(schema, o);
  if (g.is_ok()) fuzz::exercise(*g, text);
  std::string ebnf = "root ::= " + std::string(size % 3 == 0 ? ".* <[7]> " : "") + "(%json(0) | \"<p>\" params)\n";
  ebnf += "params ::= \"\"";
  if (schema.is_object() && schema.contains("properties") && schema["properties"].is_object()) {
    int n = 0;
    for (auto it = schema["properties"].begin(); it != schema["properties"].end() && n < 8; ++it, ++n) {
      // The key as a JSON Pointer inside an EBNF literal; keys needing escapes are skipped.
      const std::string& k = it.key();
      if (k.find_first_of("\"\\~/%\n\r") != std::string::npos) continue;
      const std::string at = "\"/properties/" + k + "\"";
      ebnf += " (\"t\" %raw_string(0, " + at + ") | \"f\" %json(0, " + at + "))?";
    }
  }
  std::vector<di::request::EmbeddedSchema> schemas = {{text, o}};
  auto chat = compile_ebnf(ebnf, schemas);
  if (chat.is_ok()) fuzz::exercise(*chat, text);
  return 0;
}
