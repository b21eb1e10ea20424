// MatcherConstraint: width adaptation between the engine's mask and the vocabulary's.
#include "engine/constrain/matcher_constraint.h"

#include <algorithm>
#include <cstring>

namespace di::engine::constrain {

void MatcherConstraint::fill_mask(uint32_t* bitmask, int64_t num_words) {
  const int64_t own = matcher_.compiled().vocab().mask_words();
  if (num_words >= own) {
    matcher_.fill_mask(bitmask);
    std::memset(bitmask + own, 0, size_t(num_words - own) * sizeof(uint32_t));
    return;
  }
  scratch_.resize(size_t(own));
  matcher_.fill_mask(scratch_.data());
  std::memcpy(bitmask, scratch_.data(), size_t(num_words) * sizeof(uint32_t));
}

bool MatcherConstraint::accept_token(int32_t token) {
  return token >= 0 && matcher_.accept_token(static_cast<uint32_t>(token)).is_ok();
}

void MatcherConstraint::rollback(int32_t num_tokens) {
  if (num_tokens <= 0) return;
  (void)matcher_.rollback(std::min<uint32_t>(static_cast<uint32_t>(num_tokens), matcher_.num_steps()));
}

Result<std::unique_ptr<TokenConstraint>> make_token_constraint(GrammarCompiler& compiler, const ConstraintSpec& spec) {
  DI_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledGrammar> g, compiler.compile(spec));
  return std::unique_ptr<TokenConstraint>(std::make_unique<MatcherConstraint>(std::move(g)));
}

}  // namespace di::engine::constrain
