// StreamDecoder: turns ids arriving one by one into text deltas that never split a UTF-8
// character; the deltas concatenated equal Tokenizer::decode of all ids. One per stream; not
// thread-safe. Holds the tokenizer alive; knows nothing of stop strings or the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "base/utf8.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::recipe {

class StreamDecoder {
 public:
  explicit StreamDecoder(std::shared_ptr<const Tokenizer> tokenizer,
                         bool skip_special_tokens = false);

  // Adds ids and returns the text they complete (possibly ""). Bytes of a character not yet
  // complete are held back. An invalid id is kInvalidArgument and changes nothing.
  Result<std::string> push(std::span<const int32_t> ids);
  Result<std::string> push(int32_t id) { return push(std::span<const int32_t>(&id, 1)); }
  // Flushes held-back bytes (an incomplete character becomes U+FFFD) and resets the stream.
  std::string finish();
  // Bytes held back waiting for the rest of a character.
  size_t pending_bytes() const { return text_.pending(); }

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  bool skip_special_tokens_;
  Utf8Stream text_;
};

}  // namespace di::recipe
