// Prepared: everything the engine and the output parser need for one request — the rendered
// prompt, its token ids with special_ranges, sampling options, the output constraint and the
// parsing options. Plain data produced by prepare(); it knows nothing of the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/protocol/api_error.h"
#include "recipe/protocol/conversation.h"

namespace di::recipe {

// Token ids [begin, end) that came from template text: only these may hold control tokens.
struct SpecialRange {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// The structured-output constraint the engine must enforce while decoding.
struct OutputConstraint {
  enum class Kind { kNone, kJsonObject, kJsonSchema };
  Kind kind = Kind::kNone;
  ordered_json schema;  // kJsonSchema only
  std::string name;     // kJsonSchema only
  bool strict = false;
};

// How the output parser must read the model's text (recipe/stream consumes this).
struct ParsingOptions {
  bool parse_tool_calls = false;         // tools present and tool_choice != none
  bool tool_call_initial_stage = false;  // prompt ends inside an opened DSML block
  bool reasoning_initial_stage = false;  // prompt ends with <think>: output starts as reasoning
  bool parse_json_output = false;        // json_object / json_schema
  std::vector<std::string> stop_sequences;
  std::vector<std::string> tool_names;
  std::vector<std::string> custom_tool_names;  // Responses custom tools (apply_patch)
  bool include_usage = false;
};

struct Prepared {
  Protocol protocol = Protocol::kChatCompletions;
  std::string encoding;       // "dsv4", "dsv41", "dsv32"
  std::string model;          // the served model name the request resolved to
  std::string requested_model;
  bool stream = false;

  std::string prompt;
  std::vector<int32_t> ids;
  std::vector<SpecialRange> special_ranges;
  std::vector<ImageRef> images;       // in placeholder order
  int64_t prompt_tokens = 0;          // ids.size() + image token adjustment

  // Keys are the engine's sampling option names (temperature, top_p, ..., stop,
  // stop_token_ids); only set fields appear.
  nlohmann::json sampling = nlohmann::json::object();
  OutputConstraint constraint;
  ParsingOptions parsing;
  Conversation conversation;  // the normalized request, for the output side (tools, thinking)
};

}  // namespace di::recipe
