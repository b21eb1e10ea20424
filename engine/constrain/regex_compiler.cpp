// Regex compiler: a recursive-descent parser over code points producing Exprs directly; anchors
// are accepted only at the ends of top-level alternatives.
#include "engine/constrain/regex_compiler.h"

#include <string>
#include <vector>

#include "base/hex.h"
#include "base/utf8.h"
#include "engine/constrain/char_class.h"

namespace di::engine::constrain {
namespace {

CharClass digit_class() { return CharClass::range('0', '9'); }
CharClass word_class() {
  CharClass c = CharClass::range('a', 'z');
  c.add('A', 'Z');
  c.add('0', '9');
  c.add('_', '_');
  return c;
}
CharClass space_class() {
  CharClass c;
  for (uint32_t cp : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0xA0u, 0x1680u, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu,
                      0x3000u, 0xFEFFu}) {
    c.add(cp, cp);
  }
  c.add(0x2000, 0x200A);
  return c;
}
CharClass dot_class() {
  CharClass c;
  c.add(0x0A, 0x0A);
  c.add(0x0D, 0x0D);
  c.add(0x2028, 0x2029);
  return c.complement();
}

class RegexParser {
 public:
  static constexpr int kMaxNesting = 64;

  RegexParser(std::string_view pattern, const RegexOptions& opts) : opts_(opts) {
    // The pattern is valid UTF-8 here (regex_to_expr checks), so every sequence decodes whole.
    for (size_t i = 0; i < pattern.size();) {
      unsigned char c = pattern[i];
      uint32_t cp = c;
      int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (n == 0 || i + n > pattern.size()) {
        cp = 0xFFFD;
        n = 1;
      } else if (n > 1) {
        cp = c & (0x7F >> n);
        for (int k = 1; k < n; ++k) cp = (cp << 6) | (pattern[i + k] & 0x3F);
      }
      cps_.push_back(cp);
      i += n;
    }
  }

  Result<ExprPtr> parse() {
    std::vector<ExprPtr> branches;
    do {
      bool anchored_start = eat('^');
      DI_ASSIGN_OR_RETURN(ExprPtr body, parse_seq());
      bool anchored_end = false;
      if (peek() == '$') {
        ++pos_;
        anchored_end = true;
      }
      if (!at_end() && peek() != '|') {
        if (peek() == ')') return error("unbalanced ')'");
        return error("'$' is only supported at the end of the pattern");
      }
      if (opts_.search) {
        ExprPtr any = star(opts_.json_string ? json_string_char() : CharClass::any().to_utf8());
        body = seq({anchored_start ? empty() : any, body, anchored_end ? empty() : any});
      }
      branches.push_back(body);
    } while (eat('|'));
    return alt(std::move(branches));
  }

 private:
  bool at_end() const { return pos_ >= cps_.size(); }
  uint32_t peek(size_t k = 0) const { return pos_ + k < cps_.size() ? cps_[pos_ + k] : UINT32_MAX; }
  bool eat(uint32_t c) {
    if (peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status error(const std::string& what) const {
    return Status::invalid_argument("regex: " + what + " (at offset " + std::to_string(pos_) + ")");
  }
  Status too_deep() const {
    return Status::limit("regex: groups and quantifiers nested deeper than " + std::to_string(kMaxNesting) +
                         " (at offset " + std::to_string(pos_) + ")");
  }
  Status unsupported(const std::string& what) const {
    return Status::unsupported("regex: " + what + " is not supported (at offset " + std::to_string(pos_) + ")");
  }
  ExprPtr chars(const CharClass& c) const { return opts_.json_string ? c.to_json_string_char() : c.to_utf8(); }

  Result<ExprPtr> parse_alt() {
    std::vector<ExprPtr> branches;
    do {
      DI_ASSIGN_OR_RETURN(ExprPtr s, parse_seq());
      branches.push_back(s);
    } while (eat('|'));
    return alt(std::move(branches));
  }

  Result<ExprPtr> parse_seq() {
    std::vector<ExprPtr> items;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$' && (pos_ + 1 == cps_.size() || peek(1) == '|')) break;  // trailing anchor
      if (peek() == '^' || peek() == '$') return unsupported("an anchor ('^' or '$') inside the pattern");
      const size_t at = pos_;
      DI_ASSIGN_OR_RETURN(ExprPtr atom, parse_atom());
      DI_ASSIGN_OR_RETURN(ExprPtr q, parse_quantifier(atom, static_cast<uint32_t>(at)));
      items.push_back(q);
    }
    return seq(std::move(items));
  }

  // Reads a decimal number; false when there is none.
  bool read_int(uint32_t* v) {
    size_t start = pos_;
    uint64_t x = 0;
    while (peek() >= '0' && peek() <= '9') {
      x = x * 10 + (peek() - '0');
      if (x > 100000) x = 100000;
      ++pos_;
    }
    *v = static_cast<uint32_t>(x);
    return pos_ > start;
  }

  // `at`: where the atom starts; a repetition carries it so that a compile over its work budget
  // can name the one that blew up.
  Result<ExprPtr> parse_quantifier(ExprPtr atom, uint32_t at) {
    for (int stacked = 0;; ++stacked) {
      if (nesting_ + stacked > kMaxNesting) return too_deep();
      uint32_t min = 0, max = 0;
      if (eat('*')) {
        min = 0, max = Expr::kUnbounded;
      } else if (eat('+')) {
        min = 1, max = Expr::kUnbounded;
      } else if (eat('?')) {
        min = 0, max = 1;
      } else if (peek() == '{') {
        size_t save = pos_;
        ++pos_;
        if (!read_int(&min)) {
          pos_ = save;  // a literal '{' (ECMAScript annex B)
          return atom;
        }
        max = min;
        if (eat(',')) {
          if (!read_int(&max)) max = Expr::kUnbounded;
        }
        if (!eat('}')) {
          pos_ = save;
          return atom;
        }
        if (max != Expr::kUnbounded && max < min) return error("quantifier {" + std::to_string(min) + "," + std::to_string(max) + "} out of order");
      } else {
        return atom;
      }
      eat('?');  // lazy quantifiers match the same language
      atom = with_origin(repeat(atom, min, max), at);
    }
  }

  Result<ExprPtr> parse_atom() {
    uint32_t c = cps_[pos_++];
    switch (c) {
      case '(': {
        if (eat('?')) {
          if (eat(':')) {
          } else if (peek() == '=' || peek() == '!') {
            return unsupported("lookahead '(?" + std::string(1, char(peek())) + "'");
          } else if (peek() == '<' && (peek(1) == '=' || peek(1) == '!')) {
            return unsupported("lookbehind");
          } else if (eat('<')) {
            while (!at_end() && peek() != '>') ++pos_;
            if (!eat('>')) return error("unterminated group name");
          } else {
            return error("unknown group syntax '(?'");
          }
        }
        // Groups and stacked quantifiers nest the expression tree, and every later pass over it
        // recurses: bound the nesting here, where the client's pattern decides it.
        if (++nesting_ > kMaxNesting) return too_deep();
        DI_ASSIGN_OR_RETURN(ExprPtr inner, parse_alt());
        --nesting_;
        if (!eat(')')) return error("missing ')'");
        return inner;
      }
      case ')': return error("unbalanced ')'");
      case '[': return parse_class();
      case '.': return chars(dot_class());
      case '*':
      case '+':
      case '?': return error("nothing to repeat");
      case '\\': {
        DI_ASSIGN_OR_RETURN(CharClass cls, parse_escape(false));
        return chars(cls);
      }
      default: return chars(CharClass::range(c, c));
    }
  }

  Result<uint32_t> read_hex(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      uint32_t c = peek();
      const int d = hex_digit_value(c);
      if (d < 0) return error("bad hex escape");
      v = v * 16 + uint32_t(d);
      ++pos_;
    }
    return v;
  }

  // After a backslash. In a class, \b is a backspace rather than a word boundary.
  Result<CharClass> parse_escape(bool in_class) {
    if (at_end()) return error("trailing backslash");
    uint32_t c = cps_[pos_++];
    switch (c) {
      case 'd': return digit_class();
      case 'D': return digit_class().complement();
      case 'w': return word_class();
      case 'W': return word_class().complement();
      case 's': return space_class();
      case 'S': return space_class().complement();
      case 't': return CharClass::range(9, 9);
      case 'n': return CharClass::range(10, 10);
      case 'v': return CharClass::range(11, 11);
      case 'f': return CharClass::range(12, 12);
      case 'r': return CharClass::range(13, 13);
      case '0': return CharClass::range(0, 0);
      case 'x': {
        DI_ASSIGN_OR_RETURN(uint32_t v, read_hex(2));
        return CharClass::range(v, v);
      }
      case 'u': {
        if (eat('{')) {
          uint32_t v = 0;
          int n = 0;
          while (!at_end() && peek() != '}' && n < 6) {
            DI_ASSIGN_OR_RETURN(uint32_t d, read_hex(1));
            v = v * 16 + d;
            ++n;
          }
          if (!eat('}') || n == 0) return error("bad \\u{...} escape");
          return CharClass::range(v, v);
        }
        DI_ASSIGN_OR_RETURN(uint32_t v, read_hex(4));
        return CharClass::range(v, v);
      }
      case 'c': {
        uint32_t l = peek();
        if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z'))) return error("bad \\c escape");
        ++pos_;
        return CharClass::range(l % 32, l % 32);
      }
      case 'b':
        if (in_class) return CharClass::range(8, 8);
        return unsupported("the word boundary '\\b'");
      case 'B': return unsupported("the word boundary '\\B'");
      case 'p':
      case 'P': return unsupported("the Unicode property escape '\\" + std::string(1, char(c)) + "'");
      case 'k': return unsupported("the named backreference '\\k'");
      default:
        if (c >= '1' && c <= '9') return unsupported("the backreference '\\" + std::string(1, char(c)) + "'");
        return CharClass::range(c, c);  // identity escape
    }
  }

  Result<ExprPtr> parse_class() {
    bool negate = eat('^');
    CharClass cls;
    bool first = true;
    for (;;) {
      if (at_end()) return error("missing ']'");
      if (peek() == ']') {
        ++pos_;
        break;
      }
      first = false;
      DI_ASSIGN_OR_RETURN(CharClass lo, class_atom());
      if (peek() == '-' && peek(1) != ']' && peek(1) != UINT32_MAX) {
        ++pos_;
        DI_ASSIGN_OR_RETURN(CharClass hi, class_atom());
        if (lo.ranges().size() != 1 || hi.ranges().size() != 1 || lo.ranges()[0].first != lo.ranges()[0].second ||
            hi.ranges()[0].first != hi.ranges()[0].second) {
          return error("a class escape cannot bound a range");
        }
        uint32_t a = lo.ranges()[0].first, b = hi.ranges()[0].first;
        if (a > b) return error("class range out of order");
        cls.add(a, b);
      } else {
        cls.add(lo);
      }
    }
    (void)first;
    return chars(negate ? cls.complement() : cls);
  }

  Result<CharClass> class_atom() {
    uint32_t c = cps_[pos_++];
    if (c == '\\') return parse_escape(true);
    return CharClass::range(c, c);
  }

  std::vector<uint32_t> cps_;
  int nesting_ = 0;  // open groups around pos_
  size_t pos_ = 0;
  RegexOptions opts_;
};

// Offset of the first byte that does not start a well-formed UTF-8 sequence, or npos.
size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size() || !utf8_valid(s.substr(i, n))) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace

Result<ExprPtr> regex_to_expr(std::string_view pattern, const RegexOptions& options) {
  // Ill-formed bytes used to decode into code points past U+10FFFF (a literal matching nothing)
  // or to swallow the ASCII after a lead byte ("\xd2^" hid an anchor): refuse them instead.
  if (size_t at = invalid_utf8_at(pattern); at != std::string_view::npos) {
    return Status::invalid_argument("regex: the pattern is not valid UTF-8 (at byte " + std::to_string(at) + ")");
  }
  RegexParser p(pattern, options);
  return p.parse();
}

Result<std::shared_ptr<const Grammar>> compile_regex(std::string_view pattern, const GrammarLimits& limits) {
  DI_ASSIGN_OR_RETURN(ExprPtr e, regex_to_expr(pattern, {}));
  GrammarBuilder b;
  uint32_t root = b.declare("root");
  b.define(root, e);
  return b.build(root, limits);
}

}  // namespace di::engine::constrain
