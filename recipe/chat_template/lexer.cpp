// tokenize(): preprocessing as transformers configures Jinja for chat templates, then one pass
// that splits text from tags and tags into names, literals and operators.
#include "recipe/chat_template/lexer.h"

#include <cctype>
#include <optional>

#include "base/escape.h"

namespace di::recipe::chat_template {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// lstrip_blocks: spaces and tabs between a line's start and a block or comment tag go.
std::string lstrip_blocks(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    const bool tag = j + 1 < s.size() && s[j] == '{' && (s[j + 1] == '%' || s[j + 1] == '#' || s[j + 1] == '-');
    const size_t eol = s.find('\n', i);
    const size_t end = eol == std::string_view::npos ? s.size() : eol + 1;
    out.append(s.substr(tag ? j : i, end - (tag ? j : i)));
    i = end;
  }
  return out;
}

// trim_blocks: the newline right after a block or comment tag goes.
std::string trim_blocks(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '}' && i > 0 && (s[i - 1] == '%' || s[i - 1] == '#' || s[i - 1] == '-') && i + 1 < s.size() &&
        s[i + 1] == '\n')
      ++i;
  }
  return out;
}

// `{% generation %}` / `{% endgeneration %}` mark the assistant's tokens for training; rendering
// drops the tag (and the whitespace around it where the tag has `-`).
std::string drop_generation_tags(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t p = s.find("{%", i);
    if (p == std::string::npos) break;
    size_t q = p + 2;
    const bool lstrip = q < s.size() && s[q] == '-';
    if (lstrip) ++q;
    while (q < s.size() && is_space(s[q])) ++q;
    size_t w = q;
    if (s.compare(w, 3, "end") == 0) w += 3;
    if (s.compare(w, 10, "generation") != 0) {
      out.append(s, i, p + 2 - i);
      i = p + 2;
      continue;
    }
    w += 10;
    while (w < s.size() && is_space(s[w])) ++w;
    const bool rstrip = w < s.size() && s[w] == '-';
    if (rstrip) ++w;
    if (s.compare(w, 2, "%}") != 0) {
      out.append(s, i, p + 2 - i);
      i = p + 2;
      continue;
    }
    std::string before = s.substr(i, p - i);
    if (lstrip) {
      while (!before.empty() && is_space(before.back())) before.pop_back();
    }
    out += before;
    i = w + 2;
    if (rstrip)
      while (i < s.size() && is_space(s[i])) ++i;
  }
  out.append(s, i, std::string::npos);
  return out;
}

const char* const kOperators[] = {"//", "**", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",",
                                  ".",  ":",  "|",  "=",  "<",  ">",  "+", "-", "*", "/", "%", "~"};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source) {
  std::string src(source);
  if (!src.empty() && src.back() == '\n') src.pop_back();
  src = drop_generation_tags(trim_blocks(lstrip_blocks(src)));

  std::vector<Token> out;
  int line = 1;
  size_t i = 0;
  auto error = [&](const std::string& what) {
    return Status::invalid_argument("chat template: line " + std::to_string(line) + ": " + what);
  };
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < src.size(); ++k, ++i)
      if (src[i] == '\n') ++line;
  };
  auto strip_previous_text = [&] {
    if (!out.empty() && out.back().kind == Token::Kind::kText) {
      std::string& t = out.back().text;
      while (!t.empty() && is_space(t.back())) t.pop_back();
      if (t.empty()) out.pop_back();
    }
  };
  auto skip_space = [&] {
    while (i < src.size() && is_space(src[i])) advance(1);
  };
  auto tag_at = [&](size_t k) {
    return k + 1 < src.size() && src[k] == '{' && (src[k + 1] == '%' || src[k + 1] == '{' || src[k + 1] == '#');
  };

  while (i < src.size()) {
    // Text up to the next tag.
    if (!tag_at(i)) {
      const int start_line = line;
      size_t j = i;
      while (j < src.size() && !tag_at(j)) ++j;
      out.push_back({Token::Kind::kText, src.substr(i, j - i), start_line});
      advance(j - i);
      continue;
    }
    const char kind = src[i + 1];
    const bool strip_before = i + 2 < src.size() && src[i + 2] == '-';
    if (kind == '#') {
      const size_t end = src.find("#}", i + 2);
      if (end == std::string::npos) return error("a comment {# is never closed with #}");
      const bool strip_after = end > i + 2 && src[end - 1] == '-';
      if (strip_before) strip_previous_text();
      advance(end + 2 - i);
      if (strip_after) skip_space();
      continue;
    }
    if (strip_before) strip_previous_text();
    const bool statement = kind == '%';
    out.push_back({statement ? Token::Kind::kOpenStatement : Token::Kind::kOpenExpression, statement ? "{%" : "{{", line});
    advance(strip_before ? 3 : 2);
    // Inside the tag.
    int braces = 0;
    for (;;) {
      skip_space();
      if (i >= src.size()) return error(std::string("a tag ") + (statement ? "{%" : "{{") + " is never closed");
      const std::string_view rest(src.data() + i, src.size() - i);
      const std::string_view close = statement ? "%}" : "}}";
      const bool dash_close = rest.size() >= 3 && rest[0] == '-' && rest.substr(1, 2) == close;
      if ((dash_close || rest.substr(0, 2) == close) && (statement || braces == 0)) {
        out.push_back({statement ? Token::Kind::kCloseStatement : Token::Kind::kCloseExpression, std::string(close), line});
        advance(dash_close ? 3 : 2);
        if (dash_close) skip_space();
        break;
      }
      const char c = src[i];
      if (c == '\'' || c == '"') {
        const int start_line = line;
        std::string s;
        size_t j = i + 1;
        for (;;) {
          if (j >= src.size()) return error("a string literal is never closed");
          if (src[j] == c) break;
          if (src[j] == '\\') {
            if (j + 1 >= src.size()) return error("a string literal is never closed");
            const char e = src[j + 1];
            const std::optional<char> c = single_char_escape(e, "ntrbfv\\'\"");
            if (!c) return error(std::string("unsupported escape \\") + e + " in a string literal");
            s += *c;
            j += 2;
            continue;
          }
          s += src[j++];
        }
        advance(j + 1 - i);
        out.push_back({Token::Kind::kString, std::move(s), start_line});
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t j = i;
        while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        bool is_float = false;
        // "1.5" is a float; "x.0" after a dot is an attribute chain, handled by the parser.
        const bool after_dot = !out.empty() && out.back().kind == Token::Kind::kOperator && out.back().text == ".";
        if (!after_dot && j + 1 < src.size() && src[j] == '.' && std::isdigit(static_cast<unsigned char>(src[j + 1]))) {
          is_float = true;
          ++j;
          while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        }
        out.push_back({is_float ? Token::Kind::kFloat : Token::Kind::kInteger, src.substr(i, j - i), line});
        advance(j - i);
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        out.push_back({Token::Kind::kName, src.substr(i, j - i), line});
        advance(j - i);
        continue;
      }
      bool matched = false;
      for (const char* op : kOperators) {
        const std::string_view o(op);
        if (rest.substr(0, o.size()) == o) {
          if (o == "{") ++braces;
          if (o == "}") --braces;
          out.push_back({Token::Kind::kOperator, std::string(o), line});
          advance(o.size());
          matched = true;
          break;
        }
      }
      if (!matched) return error(std::string("unexpected character '") + c + "'");
    }
  }
  out.push_back({Token::Kind::kEnd, "", line});
  return out;
}

}  // namespace di::recipe::chat_template
