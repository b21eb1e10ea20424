// The Split pre-tokenizer's patterns. Only the regexes of the supported model families are
// accepted; each is matched by a hand-written scanner that reproduces Oniguruma's leftmost,
// first-alternative-wins semantics. A String pattern is a literal. Knows nothing of BPE.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace di::recipe {

class SplitPattern {
 public:
  // `regex` is the tokenizer.json "Regex" value. Unknown regexes are DI_E_UNSUPPORTED.
  static Result<SplitPattern> from_regex(std::string_view regex);
  // A literal (the tokenizer.json "String" value); must not be empty.
  static Result<SplitPattern> from_string(std::string_view literal);

  // Finds the first match in s[from..]: on success sets [*begin, *end) and returns true.
  // `s` is well-formed UTF-8 and is the whole piece (lookaheads stop at its end).
  bool find(std::string_view s, size_t from, size_t* begin, size_t* end) const;

  // Short name of the recognised pattern ("deepseek-digits", "llama3", ...), for messages.
  const char* name() const { return name_; }

 private:
  // Returns the end of the match starting exactly at p, or npos when none starts there.
  using MatchAt = size_t (*)(std::string_view s, size_t p, const uint8_t* classes);
  MatchAt match_at_ = nullptr;
  std::string literal_;
  const char* name_ = "";
};

}  // namespace di::recipe
