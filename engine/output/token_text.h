// TokenText: what the engine needs to know of a tokenizer to stream text — the raw bytes of a
// token id and whether it is special. capi/ and tools/ adapt a real tokenizer to it; engine/
// never includes the recipe.
#pragma once

#include <cstdint>
#include <string_view>

namespace di::engine {

class TokenText {
 public:
  virtual ~TokenText() = default;
  virtual int64_t vocab_size() const = 0;
  // The bytes the token stands for (may be part of a UTF-8 character); empty for unknown ids.
  virtual std::string_view token_bytes(int32_t id) const = 0;
  virtual bool is_special(int32_t id) const = 0;
};

}  // namespace di::engine
