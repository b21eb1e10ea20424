// ModelChatTemplate: the chat template a model directory ships (chat_template.jinja, or the
// `chat_template` of tokenizer_config.json) with the special tokens its template refers to, and
// the rule for when the recipe renders with it: a model whose config.json names a DeepSeek family
// keeps the recipe's own DeepSeek encoders.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "recipe/chat_template/chat_template.h"
#include "recipe/stream/parser_options.h"  // ToolCallFormat

namespace di::recipe::chat_template {

struct ModelChatTemplate {
  ChatTemplate chat_template;
  std::string origin;                    // the file it came from, for messages
  std::optional<std::string> bos_token;  // tokenizer_config.json's, when it has one
  std::optional<std::string> eos_token;
  // How the model writes tool calls, read off the template (what it renders a call as).
  ToolCallFormat tool_format = ToolCallFormat::kNone;
};

// The tool-call format a template's source renders: `<tool_call>` → Hermes (Qwen2.5 / Qwen3);
// `<|python_tag|>`, or Llama-3 headers with `"parameters"` → Llama-3.1/3.2 JSON; else none.
ToolCallFormat template_tool_format(std::string_view source);

// `path`: a model directory, or a file inside one (tokenizer.json). nullptr when the directory
// has no chat template; an error when it has one that does not parse.
Result<std::shared_ptr<const ModelChatTemplate>> load_model_chat_template(const std::string& path);

// True when the directory's config.json has a model_type starting with "deepseek" (without a
// config.json: when tokenizer_config.json's BOS is DeepSeek's <｜begin▁of▁sentence｜>).
bool is_deepseek_model_dir(const std::string& path);

// The template a recipe on `path` renders with. `encoding` is the recipe_encoding option: absent
// = the model's template unless the model is a DeepSeek one (then nullptr: the recipe's
// encoders); "chat_template" = the model's template, an error when it has none; a DeepSeek
// encoding name = nullptr.
Result<std::shared_ptr<const ModelChatTemplate>> recipe_chat_template(const std::string& path,
                                                                       const std::optional<std::string>& encoding);

}  // namespace di::recipe::chat_template
