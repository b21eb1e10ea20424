// MatcherConstraint: the sampler's TokenConstraint (engine/sample) backed by a constrain::Matcher,
// so a request's grammar masks its logits and learns each sampled token. Owns one sequence's
// matcher; the CompiledGrammar behind it is shared. Knows nothing of how the spec arrived.
#pragma once

#include <memory>

#include "base/status.h"
#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/matcher.h"
#include "engine/sample/token_constraint.h"

namespace di::engine::constrain {

class MatcherConstraint final : public TokenConstraint {
 public:
  explicit MatcherConstraint(std::shared_ptr<const CompiledGrammar> grammar) : matcher_(std::move(grammar)) {}

  // The logits may be wider than the tokenizer (padded vocabularies): extra words stay 0.
  void fill_mask(uint32_t* bitmask, int64_t num_words) override;
  bool accept_token(int32_t token) override;
  // Rolls back at most the steps taken (the engine never asks for more).
  void rollback(int32_t num_tokens) override;
  bool is_terminated() const override { return matcher_.is_terminated() || matcher_.must_end(); }
  std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<MatcherConstraint>(*this); }

  const Matcher& matcher() const { return matcher_; }

 private:
  Matcher matcher_;
  std::vector<uint32_t> scratch_;
};

// Compiles (or finds in the cache) `spec` and returns a fresh constraint at its start.
Result<std::unique_ptr<TokenConstraint>> make_token_constraint(GrammarCompiler& compiler, const ConstraintSpec& spec);

}  // namespace di::engine::constrain
