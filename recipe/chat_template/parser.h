// The chat-template parser: tokens → statements. Covers the Jinja that model chat templates use
// (if/elif/else, for with else and `if` filters, set and set blocks, break/continue, the full
// expression grammar with Jinja's precedence); any other statement is an error naming it.
#pragma once

#include <vector>

#include "base/status.h"
#include "recipe/chat_template/ast.h"
#include "recipe/chat_template/lexer.h"

namespace di::recipe::chat_template {

Result<Body> parse(const std::vector<Token>& tokens);

}  // namespace di::recipe::chat_template
