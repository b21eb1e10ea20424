// TextStream: one completion's token ids -> text, incrementally: joins token bytes, never emits a
// partial UTF-8 character, skips special tokens when asked, and holds back text that could still
// become a stop string until that is decided. Stop strings are matched by base/marker_matcher.h,
// the matcher the recipe's output parser uses for its stop sequences too. Knows nothing of threads
// or requests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/marker_matcher.h"
#include "base/utf8.h"
#include "engine/output/token_text.h"

namespace di::engine {

class TextStream {
 public:
  TextStream(const TokenText* token_text, bool skip_special_tokens, const std::vector<std::string>& stop);

  // Adds `token`'s text (unless `suppress_text`) and appends what may be released to `out`.
  // Returns true when a stop string matched: `out` then ends just before it, and the stream is done.
  bool push(int32_t token, bool suppress_text, std::string* out);
  // The completion ended for another reason: releases the held text (an incomplete trailing
  // UTF-8 sequence becomes U+FFFD).
  void flush(std::string* out);
  bool stopped() const { return stopped_; }

 private:
  const TokenText* token_text_;
  bool skip_special_;
  bool empty_stop_ = false;            // an empty stop string matches before any text
  std::vector<MarkerMatcher> stops_;   // one per non-empty stop string
  Utf8Stream bytes_;
  std::string held_;           // complete text that may be the start of a stop string
  bool stopped_ = false;
};

}  // namespace di::engine
