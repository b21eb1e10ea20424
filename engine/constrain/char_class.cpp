// CharClass: range arithmetic and the split of code point ranges into UTF-8 byte-range sequences
// (each piece is a run of ranges where only the last k bytes vary over their full span).
#include "engine/constrain/char_class.h"

#include <algorithm>
#include <cctype>

namespace di::engine::constrain {

void CharClass::add(uint32_t lo, uint32_t hi) {
  if (lo > hi) return;
  hi = std::min(hi, kMaxCodepoint);
  if (lo > hi) return;
  std::vector<std::pair<uint32_t, uint32_t>> out;
  bool placed = false;
  for (auto [a, b] : ranges_) {
    if (b + 1 < lo) {
      out.push_back({a, b});
    } else if (hi + 1 < a) {
      if (!placed) out.push_back({lo, hi}), placed = true;
      out.push_back({a, b});
    } else {
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
  }
  if (!placed) out.push_back({lo, hi});
  ranges_ = std::move(out);
}

CharClass CharClass::complement() const {
  CharClass c;
  uint32_t next = 0;
  for (auto [a, b] : ranges_) {
    if (a > next) c.ranges_.push_back({next, a - 1});
    next = b + 1;
  }
  if (next <= kMaxCodepoint) c.ranges_.push_back({next, kMaxCodepoint});
  return c;
}

bool CharClass::contains(uint32_t cp) const {
  for (auto [a, b] : ranges_) {
    if (cp >= a && cp <= b) return true;
  }
  return false;
}

namespace {

int utf8_len(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

void encode(uint32_t cp, uint8_t* out) {
  switch (utf8_len(cp)) {
    case 1: out[0] = uint8_t(cp); break;
    case 2: out[0] = uint8_t(0xC0 | (cp >> 6)); out[1] = uint8_t(0x80 | (cp & 0x3F)); break;
    case 3:
      out[0] = uint8_t(0xE0 | (cp >> 12));
      out[1] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
      out[2] = uint8_t(0x80 | (cp & 0x3F));
      break;
    default:
      out[0] = uint8_t(0xF0 | (cp >> 18));
      out[1] = uint8_t(0x80 | ((cp >> 12) & 0x3F));
      out[2] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
      out[3] = uint8_t(0x80 | (cp & 0x3F));
  }
}

// [lo, hi] of one encoded length, split until each piece is a product of byte ranges.
void utf8_pieces(uint32_t lo, uint32_t hi, std::vector<ExprPtr>& out) {
  const int n = utf8_len(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        utf8_pieces(lo, lo | m, out);
        utf8_pieces((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        utf8_pieces(lo, (hi & ~m) - 1, out);
        utf8_pieces(hi & ~m, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  encode(lo, a);
  encode(hi, b);
  std::vector<ExprPtr> items;
  for (int i = 0; i < n; ++i) items.push_back(byte_range(a[i], b[i]));
  out.push_back(seq(std::move(items)));
}

}  // namespace

ExprPtr CharClass::to_utf8() const {
  static const uint32_t kBounds[][2] = {{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}};
  std::vector<ExprPtr> pieces;
  std::vector<ByteRange> ascii;
  for (auto [a, b] : ranges_) {
    for (auto& bound : kBounds) {
      uint32_t lo = std::max(a, bound[0]), hi = std::min(b, bound[1]);
      if (lo > hi) continue;
      if (hi < 0x80) {
        ascii.push_back(ByteRange{uint8_t(lo), uint8_t(hi)});
      } else {
        utf8_pieces(lo, hi, pieces);
      }
    }
  }
  if (!ascii.empty()) pieces.insert(pieces.begin(), bytes(std::move(ascii)));
  return alt(std::move(pieces));
}

namespace {
ExprPtr hex_digit() { return bytes({{'0', '9'}, {'A', 'F'}, {'a', 'f'}}); }

ExprPtr hex_of(uint32_t v) {
  // One hex digit in either case.
  const char* digits = "0123456789abcdef";
  char lower = digits[v], upper = char(std::toupper(lower));
  if (lower == upper) return byte_range(uint8_t(lower), uint8_t(lower));
  return bytes({{uint8_t(upper), uint8_t(upper)}, {uint8_t(lower), uint8_t(lower)}});
}
}  // namespace

ExprPtr CharClass::to_json_string_char() const {
  CharClass printable;
  std::vector<ExprPtr> alts;
  for (auto [a, b] : ranges_) {
    for (uint32_t cp = a; cp <= std::min<uint32_t>(b, 0x1F); ++cp) {
      const char* short_esc = cp == 8 ? "\\b" : cp == 9 ? "\\t" : cp == 10 ? "\\n" : cp == 12 ? "\\f" : cp == 13 ? "\\r" : nullptr;
      std::vector<ExprPtr> forms;
      if (short_esc) forms.push_back(literal(short_esc));
      forms.push_back(seq({literal("\\u00"), hex_of(cp >> 4), hex_of(cp & 15)}));
      alts.push_back(alt(std::move(forms)));
    }
    uint32_t lo = std::max<uint32_t>(a, 0x20);
    if (lo <= b) printable.add(lo, b);
  }
  if (printable.contains('"')) alts.push_back(literal("\\\""));
  if (printable.contains('\\')) alts.push_back(literal("\\\\"));
  CharClass plain;
  for (auto [a, b] : printable.ranges_) {
    for (auto [x, y] : std::vector<std::pair<uint32_t, uint32_t>>{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodepoint}}) {
      uint32_t lo = std::max(a, x), hi = std::min(b, y);
      if (lo <= hi) plain.add(lo, hi);
    }
  }
  alts.insert(alts.begin(), plain.to_utf8());
  return alt(std::move(alts));
}

ExprPtr json_string_char() {
  static const ExprPtr e = [] {
    CharClass plain;
    plain.add(0x20, 0x21);
    plain.add(0x23, 0x5B);
    plain.add(0x5D, CharClass::kMaxCodepoint);
    ExprPtr esc = seq({literal("\\"), alt({bytes({{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', 'b'}, {'f', 'f'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}}),
                                           seq({literal("u"), hex_digit(), hex_digit(), hex_digit(), hex_digit()})})});
    return alt({plain.to_utf8(), esc});
  }();
  return e;
}

}  // namespace di::engine::constrain
