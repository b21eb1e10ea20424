// prepare(): one API request body → Prepared. Parses and validates it for its protocol,
// resolves the model name, renders the prompt, tokenizes it (template text may hold control
// tokens, content never does) and checks the context budget. Stateless over a RecipeConfig.
#pragma once

#include <functional>
#include <string_view>

#include "recipe/chat_template/model_chat_template.h"
#include "recipe/encoding/encoder.h"
#include "recipe/encoding/prompt.h"
#include "recipe/prepare/prepare_images.h"
#include "recipe/prepare/prepared.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/model_aliases.h"

namespace di::recipe {

enum class ImagePolicy {
  kUnsupported,  // the model sees "[Unsupported Image]" (a model without vision)
  kReject,       // 400
  kVision,       // V4.1 image placeholders; images are fetched, decoded and counted
};

struct RecipeConfig {
  Encoding encoding = Encoding::kDsv4;
  // Set for a model that ships its own chat template (Llama, Qwen): prompts are rendered with it
  // instead of `encoding`, and tool calls in the output are left as text.
  std::shared_ptr<const chat_template::ModelChatTemplate> chat_template;
  ModelAliases models;
  int64_t context_length = 1048576;  // V4 / V4.1 positions
  // Over budget: false = 400 context_length_exceeded; true = lower max_tokens to what fits.
  bool clamp_max_tokens = false;
  ImagePolicy image_policy = ImagePolicy::kUnsupported;
  ImageOptions image_options;  // kVision only
  ConversionOptions conversion;
  // The tokenizer's ids for the parser's markers (filled where a tokenizer is loaded).
  ControlTokenIds control_tokens;
};

struct TokenizedPrompt {
  std::vector<int32_t> ids;
  std::vector<SpecialRange> special_ranges;
};
// Encodes a rendered prompt segment by segment (special segments with control tokens).
using PromptTokenizer = std::function<Result<TokenizedPrompt>(const RenderedPrompt&)>;

// Errors carry the protocol's ApiError in the Status detail ({"status": N, "body": {...}}).
// `tokenizer` may be empty: ids stay empty and the context budget is not checked.
Result<Prepared> prepare(const RecipeConfig& config, const PromptTokenizer& tokenizer,
                         Protocol protocol, std::string_view body);

// Parses and validates only (no model resolution, no rendering).
Result<ConversationRequest> parse_request(Protocol protocol, std::string_view body,
                                          const ConversionOptions& options);

}  // namespace di::recipe
