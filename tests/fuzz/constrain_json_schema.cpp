// libFuzzer target: the JSON Schema compiler and the chat reply grammar (the input as a strict
// tool's parameters). Invariants: no crash, hang or leak; a refused schema is an error value; a
// compiled one keeps the matcher invariants (constrain_fuzz_util.h) on the input's own bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/constrain/chat_output_grammar.h"
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
  nlohmann::ordered_json spec = {
      {"reasoning", size % 3 == 0},
      {"content", {{"type", "json_schema"}, {"schema", schema}}},
      {"tool_calls", "auto"},
      {"tools", nlohmann::ordered_json::array({{{"name", "f"}, {"parameters", schema}, {"strict", true}}})},
      {"markup", {{"block", " calls"}, {"invoke", " invoke"}, {"parameter", " parameter"}}}};
  auto chat = compile_chat_output(spec, o);
  if (chat.is_ok()) fuzz::exercise(*chat, text);
  return 0;
}
