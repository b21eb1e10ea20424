// Prepared: everything the engine and the output parser need for one request — the rendered
// prompt, its token ids with special_ranges, the engine's part (request::EngineRequest: sampling
// and the grammar), the output constraint as the API asked for it and the parser options. Plain
// data produced by prepare(); it knows nothing of the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/image/image_preprocess.h"
#include "recipe/protocol/protocol.h"
#include "recipe/protocol/conversation.h"
#include "recipe/stream/parser_options.h"
#include "request/engine_request.h"

namespace di::recipe {

// Token ids [begin, end) that came from template text: only these may hold control tokens.
struct SpecialRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const SpecialRange&) const = default;
};

// The structured-output constraint the engine must enforce while decoding.
struct OutputConstraint {
  enum class Kind { kNone, kJsonObject, kJsonSchema };
  Kind kind = Kind::kNone;
  ordered_json schema;  // kJsonSchema only
  std::string name;     // kJsonSchema only
  bool strict = false;
};

struct Prepared {
  Protocol protocol = Protocol::kChatCompletions;
  std::string encoding;         // "dsv4", "dsv41", "dsv32"
  std::string model;            // the served model the request's name resolved to
  std::string requested_model;  // as the request spelled it (echoed in responses)
  bool stream = false;

  std::string prompt;
  std::vector<int32_t> ids;                  // empty when the recipe has no tokenizer
  std::vector<SpecialRange> special_ranges;
  std::vector<ImageRef> images;              // in placeholder order
  // The images as the model takes them (vision recipes): image_data[i] is images[i] fetched,
  // decoded and fitted, with its size and token count.
  std::vector<image::PreparedImage> image_data;
  // Prompt tokens the images add beyond their one placeholder id each: Σ (num_tokens − 1).
  int64_t image_tokens = 0;
  // ids.size() + image_tokens; -1 when there is no tokenizer to count with.
  int64_t prompt_tokens = -1;

  // What the engine runs: sampling parameters (stop strings excluded, see stop_sequences) and
  // the grammar response_format and strict tools call for. Typed; the C ABI renders it as JSON
  // only for its accessors.
  di::request::EngineRequest engine;
  std::vector<std::string> stop_sequences;
  OutputConstraint constraint;
  ParserOptions parser;
  Conversation conversation;  // the normalized request (tools, thinking) for the output side
};

}  // namespace di::recipe
