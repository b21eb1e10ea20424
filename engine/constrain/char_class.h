// CharClass: a set of Unicode code points as sorted disjoint ranges, and its lowering to bytes —
// plain UTF-8, or as the characters may appear inside a JSON string literal (escaped). Knows
// nothing of regex syntax.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/constrain/grammar.h"

namespace di::engine::constrain {

class CharClass {
 public:
  static constexpr uint32_t kMaxCodepoint = 0x10FFFF;

  CharClass() = default;
  static CharClass range(uint32_t lo, uint32_t hi) {
    CharClass c;
    c.add(lo, hi);
    return c;
  }
  static CharClass any() { return range(0, kMaxCodepoint); }

  void add(uint32_t lo, uint32_t hi);
  void add(const CharClass& o) {
    for (auto& [lo, hi] : o.ranges_) add(lo, hi);
  }
  CharClass complement() const;
  bool contains(uint32_t cp) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }

  // Well-formed UTF-8 of any member (surrogates excluded).
  ExprPtr to_utf8() const;
  // Any member as it may be written inside a JSON string: printable characters as UTF-8, '"' and
  // '\' escaped, control characters as their short escape or \u00XX.
  ExprPtr to_json_string_char() const;

 private:
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
};

// One character of a JSON string body in any legal spelling (all escapes, including \uXXXX).
ExprPtr json_string_char();

}  // namespace di::engine::constrain
