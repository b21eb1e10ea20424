// The chat-template lexer: source text → tokens, with the whitespace rules transformers renders
// chat templates under (trim_blocks, lstrip_blocks, one trailing newline dropped, `-` markers
// trimming the neighbouring text) and transformers' `{% generation %}` markers removed. Knows no
// grammar beyond where tags start and end.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace di::recipe::chat_template {

struct Token {
  enum class Kind {
    kText,            // template text outside tags
    kOpenStatement,   // {%
    kCloseStatement,  // %}
    kOpenExpression,  // {{
    kCloseExpression, // }}
    kName,
    kString,
    kInteger,
    kFloat,
    kOperator,        // ( ) [ ] { } , . : | = == != < > <= >= + - * / // % ~ **
    kEnd,
  };
  Kind kind;
  std::string text;
  int line = 1;
};

Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace di::recipe::chat_template
