// Scanners for the Split regexes of DeepSeek V3/V4, Llama-3, Qwen2/3 and GPT-2. Each match_*
// function tries the pattern's alternatives in order at one position, as Oniguruma does, with
// the greedy quantifiers' backtracking worked out by hand (see the comments per alternative).
#include "recipe/tokenizer/split_pattern.h"

#include <string>

#include "recipe/tokenizer/unicode_class.h"

namespace di::recipe {
namespace {

constexpr size_t npos = std::string_view::npos;

// The known patterns as they appear in tokenizer.json, with CR/LF written as \r and \n escapes
// (DeepSeek's file carries them as raw control characters; both spell the same regex).
constexpr std::string_view kDeepSeekDigits = R"(\p{N}{1,3})";
constexpr std::string_view kDeepSeekCjk = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+";
constexpr std::string_view kDeepSeekWords =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct Cursor {
  std::string_view s;
  const uint8_t* classes;
  // Code point and its length at p (p < s.size()).
  uint32_t at(size_t p, size_t* len) const {
    const unsigned char c = static_cast<unsigned char>(s[p]);
    if (c < 0x80) {
      *len = 1;
      return c;
    }
    return decode_utf8(s, p, len);
  }
  uint8_t cls(uint32_t cp) const { return classes[cp]; }
  // End of the run of code points starting at p whose class intersects `mask`.
  size_t run(size_t p, uint8_t mask) const {
    size_t len;
    while (p < s.size() && (cls(at(p, &len)) & mask)) p += len;
    return p;
  }
  size_t run_crlf(size_t p) const {
    while (p < s.size() && (s[p] == '\r' || s[p] == '\n')) ++p;
    return p;
  }
};

bool is_crlf(uint32_t c) { return c == '\r' || c == '\n'; }

// The whitespace tail shared by DeepSeek's and Llama-3's patterns, at a whitespace char p:
//   \s*[\r\n]+   the whitespace run up to and including its last CR/LF, when it has one;
//   \s+(?!\S)    else the run, minus its last char unless the run ends the piece;
//   \s+          else (a single whitespace char before a non-space) that char.
size_t match_whitespace_tail(const Cursor& c, size_t p, bool with_crlf_alternative) {
  size_t last_crlf = npos, last_start = p, q = p, len;
  while (q < c.s.size()) {
    const uint32_t cp = c.at(q, &len);
    if (!(c.cls(cp) & kClassWhitespace)) break;
    if (is_crlf(cp)) last_crlf = q;
    last_start = q;
    q += len;
  }
  if (with_crlf_alternative && last_crlf != npos) return last_crlf + 1;
  if (q == c.s.size() || last_start == p) return q;
  return last_start;
}

bool ascii_letter(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
bool ascii_punct(char ch) {
  return (ch >= '!' && ch <= '/') || (ch >= ':' && ch <= '@') || (ch >= '[' && ch <= '`') ||
         (ch >= '{' && ch <= '~');
}

// \p{N}{1,3}
size_t match_deepseek_digits(std::string_view s, size_t p, const uint8_t* classes) {
  const Cursor c{s, classes};
  size_t len;
  size_t q = p;
  for (int k = 0; k < 3 && q < s.size() && (c.cls(c.at(q, &len)) & kClassNumber); ++k) q += len;
  return q == p ? npos : q;
}

bool deepseek_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF);
}

// [一-龥぀-ゟ゠-ヿ]+
size_t match_deepseek_cjk(std::string_view s, size_t p, const uint8_t* classes) {
  const Cursor c{s, classes};
  size_t q = p, len;
  while (q < s.size() && deepseek_cjk(c.at(q, &len))) q += len;
  return q == p ? npos : q;
}

// DeepSeek's third step, alternative by alternative.
size_t match_deepseek_words(std::string_view s, size_t p, const uint8_t* classes) {
  const Cursor c{s, classes};
  size_t len;
  const uint32_t cp = c.at(p, &len);
  const size_t n1 = p + len;
  const uint8_t k = c.cls(cp);
  // [!"#...~][A-Za-z]+ : one ASCII punctuation char, then ASCII letters.
  if (cp < 0x80 && ascii_punct(static_cast<char>(cp)) && n1 < s.size() && ascii_letter(s[n1])) {
    size_t q = n1;
    while (q < s.size() && ascii_letter(s[q])) ++q;
    return q;
  }
  // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ : a mark or letter starts the run itself; any other
  // char outside CR/LF/L/P/S may lead a run that follows it.
  constexpr uint8_t kLM = kClassLetter | kClassMark;
  if (k & kLM) return c.run(p, kLM);
  if (!is_crlf(cp) && !(k & (kClassPunct | kClassSymbol)) && n1 < s.size()) {
    size_t len2;
    if (c.cls(c.at(n1, &len2)) & kLM) return c.run(n1, kLM);
  }
  // ' ?[\p{P}\p{S}]+[\r\n]*'
  constexpr uint8_t kPS = kClassPunct | kClassSymbol;
  size_t q = (cp == ' ') ? n1 : p;
  if (q < s.size()) {
    size_t len2;
    if (c.cls(c.at(q, &len2)) & kPS) return c.run_crlf(c.run(q, kPS));
  }
  if (k & kClassWhitespace) return match_whitespace_tail(c, p, true);
  return npos;
}

uint32_t fold_ascii(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp == 0x17F) return 's';  // LATIN SMALL LETTER LONG S case-folds to 's'
  return cp;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) or, case-sensitive, the GPT-2 spelling. Returns the end or npos.
size_t match_contraction(const Cursor& c, size_t p, bool ignore_case) {
  const std::string_view s = c.s;
  if (s[p] != '\'' || p + 1 >= s.size()) return npos;
  size_t l1, l2;
  uint32_t a = c.at(p + 1, &l1);
  if (ignore_case) a = fold_ascii(a);
  const size_t q = p + 1 + l1;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return q;
  if ((a == 'r' || a == 'v' || a == 'l') && q < s.size()) {
    uint32_t b = c.at(q, &l2);
    if (ignore_case) b = fold_ascii(b);
    if ((a == 'l' && b == 'l') || (a != 'l' && b == 'e')) return q + l2;
  }
  return npos;
}

// Patterns whose first alternatives are the contractions (Llama-3's case-insensitive spelling or
// GPT-2's exact one): those, then `rest`, the pattern's other alternatives.
template <bool kIgnoreCase, size_t (*kRest)(const Cursor&, size_t)>
size_t contractions_then(std::string_view s, size_t p, const uint8_t* classes) {
  const Cursor c{s, classes};
  const size_t m = match_contraction(c, p, kIgnoreCase);
  return m != npos ? m : kRest(c, p);
}

// Llama-3 (max_digits 3) and Qwen2 (max_digits 1), after the contractions.
template <int kMaxDigits>
size_t match_llama3_rest(const Cursor& c, size_t p) {
  const std::string_view s = c.s;
  size_t len;
  const uint32_t cp = c.at(p, &len);
  const size_t n1 = p + len;
  const uint8_t k = c.cls(cp);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (k & kClassLetter) return c.run(p, kClassLetter);
  if (!is_crlf(cp) && !(k & kClassNumber) && n1 < s.size()) {
    size_t len2;
    if (c.cls(c.at(n1, &len2)) & kClassLetter) return c.run(n1, kClassLetter);
  }
  // \p{N}{1,kMaxDigits}
  if (k & kClassNumber) {
    size_t q = n1;
    for (int i = 1; i < kMaxDigits && q < s.size() && (c.cls(c.at(q, &len)) & kClassNumber); ++i)
      q += len;
    return q;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  constexpr uint8_t kWLN = kClassWhitespace | kClassLetter | kClassNumber;
  size_t q = (cp == ' ') ? n1 : p;
  if (q < s.size()) {
    size_t len2;
    if (!(c.cls(c.at(q, &len2)) & kWLN)) {
      size_t r = q;
      while (r < s.size() && !(c.cls(c.at(r, &len2)) & kWLN)) r += len2;
      return c.run_crlf(r);
    }
  }
  if (k & kClassWhitespace) return match_whitespace_tail(c, p, true);
  return npos;
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+, after the
// contractions.
size_t match_gpt2_rest(const Cursor& c, size_t p) {
  const std::string_view s = c.s;
  size_t len;
  const uint32_t cp = c.at(p, &len);
  const size_t q = (cp == ' ') ? p + len : p;
  if (q < s.size()) {
    size_t len2;
    const uint8_t k = c.cls(c.at(q, &len2));
    if (k & kClassLetter) return c.run(q, kClassLetter);
    if (k & kClassNumber) return c.run(q, kClassNumber);
    constexpr uint8_t kWLN = kClassWhitespace | kClassLetter | kClassNumber;
    if (!(k & kWLN)) {
      size_t r = q;
      while (r < s.size() && !(c.cls(c.at(r, &len2)) & kWLN)) r += len2;
      return r;
    }
  }
  if (c.cls(cp) & kClassWhitespace) return match_whitespace_tail(c, p, false);
  return npos;
}

std::string canonical_regex(std::string_view regex) {
  std::string out;
  out.reserve(regex.size());
  for (char ch : regex) {
    if (ch == '\r') out += "\\r";
    else if (ch == '\n') out += "\\n";
    else out.push_back(ch);
  }
  return out;
}

}  // namespace

Result<SplitPattern> SplitPattern::from_regex(std::string_view regex) {
  const std::string r = canonical_regex(regex);
  SplitPattern p;
  if (r == kDeepSeekDigits) {
    p.match_at_ = match_deepseek_digits;
    p.name_ = "deepseek-digits";
  } else if (r == kDeepSeekCjk) {
    p.match_at_ = match_deepseek_cjk;
    p.name_ = "deepseek-cjk";
  } else if (r == kDeepSeekWords) {
    p.match_at_ = match_deepseek_words;
    p.name_ = "deepseek-words";
  } else if (r == kLlama3) {
    p.match_at_ = contractions_then<true, match_llama3_rest<3>>;
    p.name_ = "llama3";
  } else if (r == kQwen2) {
    p.match_at_ = contractions_then<true, match_llama3_rest<1>>;
    p.name_ = "qwen2";
  } else if (r == kGpt2) {
    p.match_at_ = contractions_then<false, match_gpt2_rest>;
    p.name_ = "gpt2";
  } else {
    std::string shown(regex.substr(0, 80));
    return Status::unsupported("unsupported Split regex \"" + shown +
                               (regex.size() > 80 ? "...\"" : "\"") +
                               " (supported: the DeepSeek V3, Llama-3, Qwen2 and GPT-2 patterns)");
  }
  return p;
}

Result<SplitPattern> SplitPattern::from_string(std::string_view literal) {
  if (literal.empty()) return Status::invalid_argument("Split String pattern: must not be empty");
  SplitPattern p;
  p.literal_ = std::string(literal);
  p.name_ = "literal";
  return p;
}

bool SplitPattern::find(std::string_view s, size_t from, size_t* begin, size_t* end) const {
  if (!match_at_) {
    const size_t at = s.find(literal_, from);
    if (at == npos) return false;
    *begin = at;
    *end = at + literal_.size();
    return true;
  }
  const uint8_t* classes = char_class_table();
  for (size_t p = from; p < s.size();) {
    const size_t e = match_at_(s, p, classes);
    if (e != npos) {
      *begin = p;
      *end = e;
      return true;
    }
    const unsigned char b = static_cast<unsigned char>(s[p]);
    p += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  }
  return false;
}

}  // namespace di::recipe
