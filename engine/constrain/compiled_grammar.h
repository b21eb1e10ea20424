// CompiledGrammar: a Grammar bound to a TokenVocabulary, with the per-node token classification
// that makes masks cheap (the "adaptive token mask cache": tokens accepted or rejected whatever
// the stack below holds, and the few that depend on it). Filled lazily, shared by all matchers of
// the grammar, safe to use from many threads. Must not hold any per-sequence state.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/constrain/grammar.h"
#include "engine/constrain/token_vocabulary.h"

namespace di::engine::constrain {

// How the tokens fare when `node` is the top of the stack.
struct NodeTokenSets {
  std::vector<uint32_t> accepted_ids;   // accepted whatever lies below (when few)
  std::vector<uint32_t> accepted_bits;  // the same as mask words (when many); empty otherwise
  std::vector<uint32_t> uncertain;      // ids in byte order: they pop past the node's rule, so the
                                        // frames below decide
};

class CompiledGrammar {
 public:
  CompiledGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocab);

  const Grammar& grammar() const { return *grammar_; }
  const TokenVocabulary& vocab() const { return *vocab_; }
  const std::shared_ptr<const Grammar>& grammar_ptr() const { return grammar_; }

  // The classification for `node`, computed on first use. The reference stays valid for the
  // lifetime of this object.
  const NodeTokenSets& node_sets(uint32_t node) const;

  // Nodes classified so far (for benchmarks and tests).
  size_t num_classified() const;

 private:
  std::shared_ptr<NodeTokenSets> classify(uint32_t node) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenVocabulary> vocab_;
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<NodeTokenSets>> sets_;
};

}  // namespace di::engine::constrain
