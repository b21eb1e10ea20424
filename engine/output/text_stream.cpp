// TextStream: UTF-8 completion and stop-string hold-back. Each push feeds the new text to every
// stop's matcher; of the stops completed in it the one starting first wins (so "abcd" beats "bc"
// when one token brings both), and what no matcher may still extend is released.
#include "engine/output/text_stream.h"

#include <algorithm>

namespace di::engine {

TextStream::TextStream(const TokenText* token_text, bool skip_special_tokens, const std::vector<std::string>& stop)
    : token_text_(token_text), skip_special_(skip_special_tokens) {
  for (const std::string& s : stop) {
    if (s.empty()) {
      empty_stop_ = true;
      continue;
    }
    stops_.emplace_back(MarkerMatcher::Kind::kLiteral, std::make_shared<const MarkerPattern>(s));
  }
}

bool TextStream::push(int32_t token, bool suppress_text, std::string* out) {
  if (stopped_) return true;
  const size_t old_size = held_.size();
  if (!suppress_text && token_text_ != nullptr && !(skip_special_ && token_text_->is_special(token)))
    held_.append(bytes_.push(token_text_->token_bytes(token)));
  size_t best = empty_stop_ ? 0 : std::string::npos;  // where the earliest completed stop starts
  size_t hold = 0;
  if (!empty_stop_) {
    for (MarkerMatcher& m : stops_) {
      bool matched = false;
      for (size_t i = old_size; i < held_.size(); ++i) {
        if (!m.feed(static_cast<uint8_t>(held_[i]))) continue;
        best = std::min(best, i + 1 - m.match_length());
        matched = true;
        break;  // its first match in this push starts earliest; later bytes cannot do better
      }
      if (!matched) hold = std::max(hold, m.partial());
    }
  }
  if (best != std::string::npos) {
    out->append(held_, 0, best);
    held_.clear();
    bytes_.clear();
    stopped_ = true;
    return true;
  }
  const size_t n = held_.size() - std::min(hold, held_.size());
  out->append(held_, 0, n);
  held_.erase(0, n);
  return false;
}

void TextStream::flush(std::string* out) {
  if (stopped_) return;
  out->append(held_);
  held_.clear();
  out->append(bytes_.finish());  // a cut-off character: one U+FFFD, as decode gives
}

}  // namespace di::engine
