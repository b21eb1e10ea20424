// Structured output for the C ABI's engine: the engine's grammar compiler (built on first use from
// the tokenizer.json the engine loaded) and the translation of constraint options (di_submit)
// into a ConstraintSpec. A prepared request brings its spec typed, chosen by the recipe
// (recipe/prepare/engine_constraint.h). Grammars themselves live in engine/constrain.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "base/status.h"
#include "deepinfer.h"
#include "engine/constrain/grammar_compiler.h"
#include "engine/sample/token_constraint.h"

namespace di::recipe {
class Tokenizer;
}

namespace di::capi {

class EngineGrammars {
 public:
  // `tokenizer` may be null (the model directory had no tokenizer.json): every constrained
  // request then fails with a message saying so. `logits_width` is the model's vocab_size.
  // `limits` bound every compile (constraint_max_compile_work).
  EngineGrammars(std::shared_ptr<const recipe::Tokenizer> tokenizer, int64_t logits_width,
                 std::vector<int32_t> eos_ids, const engine::constrain::GrammarLimits& limits = {});

  // A fresh constraint at the start of `spec`'s grammar (compiled once per distinct spec).
  Result<std::unique_ptr<engine::TokenConstraint>> make(const engine::constrain::ConstraintSpec& spec);

  // The compiler, created on first call (tests and tools).
  Result<std::shared_ptr<engine::constrain::GrammarCompiler>> compiler();

 private:
  std::shared_ptr<const recipe::Tokenizer> tokenizer_;
  int64_t logits_width_;
  std::vector<int32_t> eos_ids_;
  engine::constrain::GrammarLimits limits_;
  std::mutex mu_;
  std::shared_ptr<engine::constrain::GrammarCompiler> compiler_;
};

// The constraint_* sampling keys of `options` (at most one of them), or nullopt when none is set.
Result<std::optional<engine::constrain::ConstraintSpec>> constraint_from_options(const di_options* options);

}  // namespace di::capi
