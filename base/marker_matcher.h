// MarkerMatcher: incremental recognition of one marker (a literal, a literal after any number of
// newlines, or a single leading newline) in a byte stream, reporting how many trailing bytes are
// still a possible match so the caller can hold them back. The one matcher of markers and stop
// strings: the recipe's output state machine and the engine's TextStream (di_submit) both use it.
// Knows nothing of stages or actions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace di {

// A literal with its KMP failure table, built once and shared by every matcher of it. The text
// must not be empty (an empty stop string is decided by its caller: it matches at once).
class MarkerPattern {
 public:
  explicit MarkerPattern(std::string text);
  const std::string& text() const { return text_; }
  size_t size() const { return text_.size(); }
  // The KMP transition: the matched-prefix length after reading `c` in state `state`.
  size_t next(size_t state, uint8_t c) const;

 private:
  std::string text_;
  std::vector<size_t> fail_;  // fail_[i]: longest proper border of text_[0, i]
};

class MarkerMatcher {
 public:
  enum class Kind {
    kLiteral,            // the pattern
    kNewlinesThen,       // "\n"* followed by the pattern; the newlines count as matched bytes
    kLeadingNewline,     // exactly "\n" as the first byte this matcher sees
  };

  MarkerMatcher(Kind kind, std::shared_ptr<const MarkerPattern> pattern);

  // Feeds one byte; true when the marker completed on it.
  bool feed(uint8_t c);
  // Bytes at the end of the input that may still grow into a match (0 after a completion).
  size_t partial() const;
  // Bytes of the completed match (valid right after feed() returned true).
  size_t match_length() const { return match_length_; }

 private:
  Kind kind_;
  std::shared_ptr<const MarkerPattern> pattern_;
  size_t state_ = 0;      // matched prefix length of the pattern
  size_t newlines_ = 0;   // kNewlinesThen: newlines right before the matched prefix
  bool seen_byte_ = false;
  size_t match_length_ = 0;
};

}  // namespace di
