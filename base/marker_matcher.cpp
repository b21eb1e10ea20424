// MarkerMatcher: KMP over bytes so a failed partial match falls back to the longest border
// (a stop "猫猫" still matches in "猫b猫猫") instead of restarting and missing overlaps.
#include "base/marker_matcher.h"

namespace di {

MarkerPattern::MarkerPattern(std::string text) : text_(std::move(text)), fail_(text_.size(), 0) {
  for (size_t i = 1, k = 0; i < text_.size(); ++i) {
    while (k > 0 && text_[i] != text_[k]) k = fail_[k - 1];
    if (text_[i] == text_[k]) ++k;
    fail_[i] = k;
  }
}

size_t MarkerPattern::next(size_t state, uint8_t c) const {
  if (state == text_.size()) state = fail_[state - 1];
  while (state > 0 && static_cast<uint8_t>(text_[state]) != c) state = fail_[state - 1];
  if (static_cast<uint8_t>(text_[state]) == c) ++state;
  return state;
}

MarkerMatcher::MarkerMatcher(Kind kind, std::shared_ptr<const MarkerPattern> pattern)
    : kind_(kind), pattern_(std::move(pattern)) {}

bool MarkerMatcher::feed(uint8_t c) {
  match_length_ = 0;
  if (kind_ == Kind::kLeadingNewline) {
    const bool first = !seen_byte_;
    seen_byte_ = true;
    if (first && c == '\n') {
      match_length_ = 1;
      return true;
    }
    return false;
  }
  const size_t before = state_;
  state_ = pattern_->next(state_, c);
  if (kind_ == Kind::kNewlinesThen) {
    // Newlines only count while no byte of the literal has matched yet; once the literal's
    // match falls back to a shorter border, the newlines belonged to the abandoned attempt.
    if (state_ == 0) {
      newlines_ = c != '\n' ? 0 : before == 0 ? newlines_ + 1 : 1;
    } else if (before != 0 && state_ != before + 1) {
      newlines_ = 0;
    } else if (before == 0 && state_ != 1) {
      newlines_ = 0;
    }
  }
  if (state_ == pattern_->size()) {
    match_length_ = state_ + newlines_;
    state_ = 0;
    newlines_ = 0;
    return true;
  }
  return false;
}

size_t MarkerMatcher::partial() const {
  if (kind_ == Kind::kLeadingNewline) return 0;
  return state_ + newlines_;
}

}  // namespace di
