// One-character backslash escapes as the string literals of several grammars read them (Jinja
// chat templates, GBNF grammars). Each grammar accepts its own set; a letter means the same
// control character in all of them. Knows single characters only; \x, \u and the like are the
// caller's.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace di {

// What `\e` stands for when `e` is one of `accepted`: n r t b f v their control characters, any
// other accepted character (\\, \", \', ...) itself. nullopt for an escape the grammar lacks.
constexpr std::optional<char> single_char_escape(char e, std::string_view accepted) {
  if (accepted.find(e) == std::string_view::npos) return std::nullopt;
  constexpr std::string_view kLetters = "nrtbfv";
  constexpr std::string_view kControls = "\n\r\t\b\f\v";
  if (const size_t i = kLetters.find(e); i != std::string_view::npos) return kControls[i];
  return e;
}

}  // namespace di
