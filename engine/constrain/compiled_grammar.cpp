// CompiledGrammar: classifies every token for one node by walking the vocabulary trie from that
// node alone (the frames below replaced by a sentinel), pruning dead subtrees.
#include "engine/constrain/compiled_grammar.h"

#include "engine/constrain/pda.h"

namespace di::engine::constrain {

CompiledGrammar::CompiledGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocab)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)), sets_(grammar_->nodes().size()) {}

const NodeTokenSets& CompiledGrammar::node_sets(uint32_t node) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sets_[node]) return *sets_[node];
  }
  // Computed outside the lock so other sequences keep going; a rare duplicate is discarded.
  std::shared_ptr<NodeTokenSets> s = classify(node);
  std::lock_guard<std::mutex> lock(mu_);
  if (!sets_[node]) sets_[node] = std::move(s);
  return *sets_[node];
}

size_t CompiledGrammar::num_classified() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (auto& s : sets_) n += s != nullptr;
  return n;
}

// A token is accepted when some path consumes all its bytes while staying inside the node's rule
// (or returns from it exactly at the last byte); uncertain when no such path exists but one
// returns from the rule with bytes left (the caller's frames decide); rejected otherwise.
std::shared_ptr<NodeTokenSets> CompiledGrammar::classify(uint32_t node) const {
  auto out = std::make_shared<NodeTokenSets>();
  const auto& trie = vocab_->trie();
  Pda pda(*grammar_);
  FramePool pool;
  size_t max_depth = 1;
  for (const auto& t : trie) max_depth = std::max<size_t>(max_depth, t.depth);
  std::vector<std::vector<StackTop>> states(max_depth + 1);
  std::vector<char> popped(max_depth + 1, 0);  // a return past the node happened at depth <= d
  std::vector<size_t> pool_mark(max_depth + 1, 1);
  states[0] = {StackTop{node, FramePool::kBottom}};

  const uint32_t n = static_cast<uint32_t>(trie.size());
  for (uint32_t i = 0; i < n;) {
    const auto& tn = trie[i];
    const uint16_t d = tn.depth;
    pool.truncate(pool_mark[d - 1]);
    bool here = pda.step(pool, states[d - 1], tn.byte, states[d]);
    pool_mark[d] = pool.size();
    popped[d] = popped[d - 1] || here;
    if (tn.token >= 0) {
      if (!states[d].empty() || here) {
        out->accepted_ids.push_back(static_cast<uint32_t>(tn.token));
      } else if (popped[d - 1]) {
        out->uncertain.push_back(static_cast<uint32_t>(tn.token));
      }
    }
    if (states[d].empty()) {
      if (popped[d]) {
        for (uint32_t j = i + 1; j < tn.end; ++j) {
          if (trie[j].token >= 0) out->uncertain.push_back(static_cast<uint32_t>(trie[j].token));
        }
      }
      i = tn.end;
      continue;
    }
    ++i;
  }
  // Bits pay off once the id list would be longer than the bitmask itself.
  const uint32_t words = vocab_->mask_words();
  if (out->accepted_ids.size() > words) {
    out->accepted_bits.assign(words, 0);
    for (uint32_t id : out->accepted_ids) out->accepted_bits[id >> 5] |= 1u << (id & 31);
    out->accepted_ids.clear();
    out->accepted_ids.shrink_to_fit();
  }
  return out;
}

}  // namespace di::engine::constrain
