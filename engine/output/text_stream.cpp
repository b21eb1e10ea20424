// TextStream: UTF-8 completion and stop-string hold-back.
#include "engine/output/text_stream.h"

#include <algorithm>

#include "base/utf8.h"

namespace di::engine {

size_t TextStream::releasable() const {
  // Hold back the longest suffix of held_ that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stop_) {
    const size_t max_len = std::min(s.size() - 1, held_.size());
    for (size_t len = max_len; len > hold; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
    }
  }
  return held_.size() - hold;
}

bool TextStream::push(int32_t token, bool suppress_text, std::string* out) {
  if (stopped_) return true;
  if (!suppress_text && token_text_ != nullptr && !(skip_special_ && token_text_->is_special(token)))
    held_.append(bytes_.push(token_text_->token_bytes(token)));
  if (!stop_.empty()) {
    size_t best = std::string::npos;
    for (const std::string& s : stop_) best = std::min(best, held_.find(s));
    if (best != std::string::npos) {
      out->append(held_, 0, best);
      held_.clear();
      bytes_.clear();
      stopped_ = true;
      return true;
    }
  }
  const size_t n = releasable();
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
