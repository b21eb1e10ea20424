// ParserOptions: everything the output parser needs to know about one request, filled by the
// recipe's prepare step (or parsed from JSON for output that did not come through the engine).
// Plain data plus its JSON form; it must not hold behaviour of the parser itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/protocol/protocol.h"  // Protocol

namespace di::recipe {

// The prompt format the model was driven with; it decides the DSML tag names (V4 `tool_calls` /
// `invoke` / `parameter`, V4.1 ` calls` / ` invoke` / ` parameter`). The parser accepts both tag
// spellings either way, so this only matters for diagnostics and future formats.
enum class EncodingVersion { kDsv4, kDsv41 };

// How the model writes tool calls: DeepSeek's DSML, or one of the dense families' formats as
// their chat templates define them (the recipe picks it from the model's template).
enum class ToolCallFormat {
  kDsml,        // DeepSeek: `<｜DSML｜tool_calls>` blocks
  kHermes,      // Qwen2.5 / Qwen3: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`
  kLlama3Json,  // Llama-3.1 / 3.2: the message is `{"name": ..., "parameters": {...}}` (calls
                // separated by `;`), optionally after `<|python_tag|>`
  kNone,        // a templated model whose template shows no tool-call format: calls stay text
};
const char* tool_call_format_name(ToolCallFormat f);  // "dsml", "hermes", "llama3_json", "none"

// A tool the request declared. Only the name is needed to parse; the schema and `strict` travel
// along for validation and for the Responses `tools` echo.
struct ToolSpec {
  std::string name;
  nlohmann::json parameters = nlohmann::json::object();  // JSON Schema, {} when absent
  bool strict = false;
  // "function" for ordinary tools; "custom" for a Responses custom tool (e.g. apply_patch), whose
  // single string parameter `input` is streamed as custom_tool_call input.
  std::string type = "function";
};

// Ids of the control tokens whose identity decides a marker when the parser is fed token ids.
// -1 = unknown: the marker is then recognised by its text only.
struct ControlTokenIds {
  int32_t think_start = -1;  // `<think>`
  int32_t think_end = -1;    // `</think>`
  int32_t dsml = -1;         // `｜DSML｜` (the angle brackets around it are ordinary text)
  int32_t eos = -1;          // `<｜end▁of▁sentence｜>`: dropped from the output when fed as an id
};

struct ParserOptions {
  Protocol protocol = Protocol::kChatCompletions;
  EncodingVersion encoding = EncodingVersion::kDsv41;

  // The prompt ended with `<think>`: output starts as reasoning (leading newlines dropped).
  bool prompt_opened_thinking = false;
  // Thinking mode was requested (decides the Chat `reasoning_content` key and the Messages
  // empty thinking block). Normally equal to prompt_opened_thinking.
  bool thinking = false;

  // Parse tool calls (tools present and tool_choice != none), written as tool_format says.
  bool parse_tool_calls = false;
  // Also decides the end-of-turn texts dropped from a templated model's output (`<|eot_id|>`,
  // `<|eom_id|>`, `<|im_end|>`, ...) when they arrive as text.
  ToolCallFormat tool_format = ToolCallFormat::kDsml;
  // tool_choice required: the prompt was prefilled with the block opener, so output starts
  // inside the tool-call block.
  bool prompt_opened_tool_calls = false;
  std::vector<ToolSpec> tools;
  // The request's parallel_tool_calls (Anthropic: !disable_parallel_tool_use). false: the
  // engine's grammar admits one call, and Responses echoes it.
  bool parallel_tool_calls = true;

  // response_format json_object: only the JSON span is content.
  bool json_object = false;
  // Stop strings: matched in answer text (never in reasoning or tool markup), removed from the
  // output, held back while a partial match is still possible. Empty strings are dropped.
  std::vector<std::string> stop_sequences;

  bool stream = false;
  // Chat Completions stream_options.include_usage: one extra final chunk with `choices: []`.
  bool include_usage = false;

  std::string model;
  // The response id the event generators build item/tool-call ids from ("chatcmpl-..." etc. are
  // prefixed by each protocol). Empty = generated at parser creation.
  std::string request_id;
  // Unix seconds for `created` / `created_at`; 0 = the clock at parser creation.
  int64_t created = 0;
  std::string system_fingerprint;  // Chat Completions; empty = null

  ControlTokenIds control_tokens;
};

// JSON form, the one di_parser_create_from_json takes:
// {"protocol":"chat"|"responses"|"messages", "encoding":"dsv4"|"dsv41",
//  "prompt_opened_thinking":bool, "thinking":bool, "parse_tool_calls":bool,
//  "prompt_opened_tool_calls":bool, "parallel_tool_calls":bool,
//  "tool_format":"dsml"|"hermes"|"llama3_json"|"none",
//  "tools":[{"name":..., "parameters":{...}, "strict":bool, "type":"function"|"custom"}],
//  "json_object":bool, "stop":[...], "stream":bool, "include_usage":bool, "model":...,
//  "request_id":..., "created":int, "system_fingerprint":...,
//  "control_tokens":{"think_start":id, "think_end":id, "dsml":id, "eos":id}}
// Every key is optional; unknown keys are rejected so typos surface. `thinking` defaults to
// prompt_opened_thinking, `parse_tool_calls` to (tools non-empty).
Result<ParserOptions> parser_options_from_json(const nlohmann::json& j);
nlohmann::json parser_options_to_json(const ParserOptions& options);

}  // namespace di::recipe
