// ChatTemplate: a model's Jinja chat template (tokenizer_config.json's `chat_template`, or
// chat_template.jinja), parsed once and rendered per conversation with transformers'
// variables (messages, tools, add_generation_prompt, bos_token, eos_token and any extra keyword
// arguments such as enable_thinking). Covers the Jinja subset Llama-3 and Qwen2/Qwen3 templates
// use; anything else is an error naming the construct, at parse or at render time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace di::recipe::chat_template {

struct Stmt;

class ChatTemplate {
 public:
  static Result<ChatTemplate> parse(std::string_view source);

  // `context`: a JSON object of the template's variables. The output is capped at 64 MiB.
  Result<std::string> render(const nlohmann::ordered_json& context) const;

 private:
  std::shared_ptr<const std::vector<std::unique_ptr<Stmt>>> body_;
};

}  // namespace di::recipe::chat_template
