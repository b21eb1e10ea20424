// Leftmost-longest matching by narrowing a sorted list one byte at a time, and Hugging Face's
// single_word / lstrip / rstrip rules (added_vocabulary.rs find_matches).
#include "recipe/tokenizer/added_vocabulary.h"

#include <algorithm>
#include <numeric>

#include "recipe/tokenizer/unicode_class.h"

namespace di::recipe {

void AddedTokenMatcher::build(std::vector<std::string> patterns) {
  patterns_ = std::move(patterns);
  sorted_.resize(patterns_.size());
  std::iota(sorted_.begin(), sorted_.end(), 0u);
  std::sort(sorted_.begin(), sorted_.end(),
            [&](uint32_t a, uint32_t b) { return patterns_[a] < patterns_[b]; });
  std::fill(std::begin(first_byte_), std::end(first_byte_), false);
  for (const std::string& p : patterns_)
    if (!p.empty()) first_byte_[static_cast<uint8_t>(p[0])] = true;
}

bool AddedTokenMatcher::find(std::string_view text, size_t from, size_t* begin, size_t* end,
                             size_t* index) const {
  if (patterns_.empty()) return false;
  for (size_t i = from; i < text.size(); ++i) {
    if (!first_byte_[static_cast<uint8_t>(text[i])]) continue;
    // Narrow [lo, hi) of sorted patterns to those agreeing with text[i..i+k]; record the
    // longest pattern that ends inside the text.
    size_t lo = 0, hi = sorted_.size();
    size_t best_len = 0, best = 0;
    for (size_t k = 0; i + k < text.size() && lo < hi; ++k) {
      const char ch = text[i + k];
      auto key = [&](uint32_t idx) {
        const std::string& p = patterns_[idx];
        return k < p.size() ? static_cast<int>(static_cast<uint8_t>(p[k])) : -1;
      };
      const int want = static_cast<uint8_t>(ch);
      // Patterns shorter than k+1 sort first within the current range (they are prefixes).
      auto first = std::partition_point(sorted_.begin() + lo, sorted_.begin() + hi,
                                        [&](uint32_t idx) { return key(idx) < want; });
      auto last = std::partition_point(first, sorted_.begin() + hi,
                                       [&](uint32_t idx) { return key(idx) == want; });
      lo = first - sorted_.begin();
      hi = last - sorted_.begin();
      if (lo < hi && patterns_[sorted_[lo]].size() == k + 1) {
        best_len = k + 1;
        best = sorted_[lo];
      }
    }
    if (best_len > 0) {
      *begin = i;
      *end = i + best_len;
      *index = best;
      return true;
    }
  }
  return false;
}

namespace {

// Rust's char::is_alphanumeric (Alphabetic or Numeric) approximated by \p{L} | \p{N}, plus '_'.
bool is_word_char(uint32_t cp) {
  return cp == '_' || (char_class_table()[cp] & (kClassLetter | kClassNumber));
}

uint32_t last_char(std::string_view s, size_t end) {
  size_t p = end - 1;
  while (p > 0 && (static_cast<uint8_t>(s[p]) & 0xC0) == 0x80) --p;
  size_t len;
  return decode_utf8(s, p, &len);
}

bool is_space(uint32_t cp) { return char_class_table()[cp] & kClassWhitespace; }

}  // namespace

void AddedVocabulary::split(std::string_view text, bool normalized,
                            std::vector<AddedSplit>& out) const {
  const AddedTokenMatcher& matcher = normalized ? norm_ : raw_;
  const std::vector<uint32_t>& ids = normalized ? norm_ids_ : raw_ids_;
  size_t start_offset = 0, pos = 0, b, e, idx;
  while (pos < text.size() && matcher.find(text, pos, &b, &e, &idx)) {
    pos = e;
    const AddedToken& tok = tokens_[ids[idx]];
    if (tok.single_word) {
      const bool start_ok = b == 0 || !is_word_char(last_char(text, b));
      size_t len = 0;
      const bool stop_ok = e == text.size() || !is_word_char(decode_utf8(text, e, &len));
      if (!start_ok || !stop_ok) continue;
    }
    if (tok.lstrip) {
      size_t nb = b;
      while (nb > start_offset && is_space(last_char(text, nb))) {
        size_t p = nb - 1;
        while (p > 0 && (static_cast<uint8_t>(text[p]) & 0xC0) == 0x80) --p;
        nb = p;
      }
      b = nb;
    }
    if (tok.rstrip) {
      size_t len;
      while (e < text.size() && is_space(decode_utf8(text, e, &len))) e += len;
      pos = e;
    }
    if (b > start_offset) out.push_back({start_offset, b, -1});
    out.push_back({b, e, tok.id});
    start_offset = e;
  }
  if (start_offset < text.size()) out.push_back({start_offset, text.size(), -1});
}

}  // namespace di::recipe
