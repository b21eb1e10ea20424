// CustomToolInput: matches the prefix `{ "input" : "` (JSON whitespace allowed between the
// tokens), then decodes the JSON string body as it streams and ignores what follows its
// closing quote. A prefix that cannot match turns the decoder into a pass-through.
#include "recipe/protocol/responses/custom_tool_input.h"

#include <cstdint>

#include "base/hex.h"

namespace di::recipe {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// How far `s` matches `{ "input" : "`: -1 = cannot match, 0 = a proper prefix so far,
// otherwise the length of the complete prefix.
long match_prefix(std::string_view s) {
  static constexpr std::string_view kTokens[] = {"{", "\"input\"", ":", "\""};
  size_t i = 0;
  for (std::string_view tok : kTokens) {
    while (i < s.size() && is_ws(s[i])) ++i;
    for (char c : tok) {
      if (i == s.size()) return 0;
      if (s[i] != c) return -1;
      ++i;
    }
  }
  return static_cast<long>(i);
}

}  // namespace

void CustomToolInput::append_code_point(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string CustomToolInput::decode(std::string_view s) {
  std::string out;
  std::string text = held_;
  text.append(s);
  held_.clear();
  size_t i = 0;
  auto flush_surrogate = [&] {
    if (high_surrogate_ != 0) append_code_point(0xFFFD, &out);  // a lone high surrogate
    high_surrogate_ = 0;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      flush_surrogate();
      mode_ = Mode::kDone;
      return out;
    }
    if (c != '\\') {
      flush_surrogate();
      out.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) break;  // the escape continues in the next piece
    const char e = text[i + 1];
    if (e == 'u') {
      if (i + 6 > text.size()) break;
      uint32_t cp = 0;
      bool ok = true;
      for (size_t k = i + 2; k < i + 6; ++k) {
        const int h = hex_digit_value(text[k]);
        ok = ok && h >= 0;
        cp = (cp << 4) | static_cast<uint32_t>(h < 0 ? 0 : h);
      }
      if (!ok) {
        flush_surrogate();
        out.append(text, i, 6);  // not an escape JSON knows: keep it as written
      } else if (cp >= 0xD800 && cp <= 0xDBFF) {
        flush_surrogate();
        high_surrogate_ = cp;
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        if (high_surrogate_ != 0)
          append_code_point(0x10000 + ((high_surrogate_ - 0xD800) << 10) + (cp - 0xDC00), &out);
        else
          append_code_point(0xFFFD, &out);
        high_surrogate_ = 0;
      } else {
        flush_surrogate();
        append_code_point(cp, &out);
      }
      i += 6;
      continue;
    }
    flush_surrogate();
    switch (e) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      default: out.append(text, i, 2); break;  // not a JSON escape: keep it as written
    }
    i += 2;
  }
  held_ = text.substr(i);
  return out;
}

std::string CustomToolInput::push(std::string_view piece) {
  switch (mode_) {
    case Mode::kDone: return {};
    case Mode::kRaw: return std::string(piece);
    case Mode::kString: return decode(piece);
    case Mode::kPrefix: break;
  }
  held_.append(piece);
  const long m = match_prefix(held_);
  if (m == 0) return {};
  if (m < 0) {
    std::string compact;
    for (char c : held_)
      if (!is_ws(c)) compact.push_back(c);
    if (compact == "{}") {  // a call without arguments: empty input
      held_.clear();
      mode_ = Mode::kDone;
      return {};
    }
    mode_ = Mode::kRaw;
    std::string raw = std::move(held_);
    held_.clear();
    return raw;
  }
  const std::string rest = held_.substr(static_cast<size_t>(m));
  held_.clear();
  mode_ = Mode::kString;
  return decode(rest);
}

std::string CustomToolInput::finish() {
  std::string out;
  if (mode_ == Mode::kPrefix) out = std::move(held_);  // never matched: the raw text
  else if (mode_ == Mode::kString) {
    if (high_surrogate_ != 0) append_code_point(0xFFFD, &out);
    out += held_;  // an escape cut off by the end, as written
  }
  held_.clear();
  high_surrogate_ = 0;
  mode_ = Mode::kDone;
  return out;
}

}  // namespace di::recipe
