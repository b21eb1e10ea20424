// TokenConstraint: the sampler's hook for structured output. A per-sequence matcher says which
// tokens are allowed next (a bitmask of ceil(V/32) words, bit i of word i/32 = token i allowed)
// and learns each sampled token. The engine owns one per sequence; engine/constrain implements it.
#pragma once

#include <cstdint>
#include <memory>

namespace di::engine {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Writes the allowed-token mask for the next position into `bitmask` (`num_words` words).
  virtual void fill_mask(uint32_t* bitmask, int64_t num_words) = 0;
  // Advances past `token`; false when the token violates the constraint.
  virtual bool accept_token(int32_t token) = 0;
  // Undoes the last `num_tokens` accepted tokens (speculative decoding).
  virtual void rollback(int32_t num_tokens) = 0;
  // True when the constraint is complete and only end-of-sequence may follow.
  virtual bool is_terminated() const = 0;
  // A copy at the same state, for n > 1 completions forked from one prompt.
  virtual std::unique_ptr<TokenConstraint> clone() const = 0;
};

}  // namespace di::engine
