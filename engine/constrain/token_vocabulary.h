// TokenVocabulary: a model's tokens as byte strings, built once per model, plus the structures
// mask computation walks (a byte trie in preorder). Knows nothing of grammars or tokenizer files:
// callers pass the bytes each token id decodes to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace di::engine::constrain {

class TokenVocabulary {
 public:
  // A trie node in preorder: children follow their parent; `end` is one past the subtree.
  struct TrieNode {
    uint8_t byte = 0;
    uint16_t depth = 0;     // 1 for a token's first byte
    int32_t token = -1;     // the token ending here, or -1
    uint32_t end = 0;
  };

  // tokens[id] = the bytes token id decodes to. `special_ids` never match a grammar (control
  // tokens); `eos_ids` are allowed exactly when the grammar can end. `mask_size` is the logits
  // width (>= tokens.size(); ids past tokens.size() are padding, always masked).
  static Result<TokenVocabulary> create(std::vector<std::string> tokens, std::vector<uint32_t> eos_ids,
                                        std::vector<uint32_t> special_ids, uint32_t mask_size = 0);

  uint32_t size() const { return static_cast<uint32_t>(tokens_.size()); }
  uint32_t mask_size() const { return mask_size_; }
  uint32_t mask_words() const { return (mask_size_ + 31) / 32; }
  const std::string& token(uint32_t id) const { return tokens_[id]; }
  bool is_eos(uint32_t id) const { return id < kind_.size() && kind_[id] == kEos; }
  bool is_special(uint32_t id) const { return id < kind_.size() && kind_[id] != kNormal; }
  const std::vector<uint32_t>& eos_ids() const { return eos_ids_; }
  const std::vector<TrieNode>& trie() const { return trie_; }
  // Token ids of grammar-matchable tokens sorted by bytes, and each one's rank in that order.
  const std::vector<uint32_t>& sorted_ids() const { return sorted_; }
  uint32_t rank(uint32_t id) const { return rank_[id]; }
  // A short hash of the contents, for cache keys.
  uint64_t fingerprint() const { return fingerprint_; }

 private:
  enum Kind : uint8_t { kNormal, kSpecial, kEos };
  std::vector<std::string> tokens_;
  std::vector<uint8_t> kind_;
  std::vector<uint32_t> eos_ids_;
  std::vector<TrieNode> trie_;
  std::vector<uint32_t> sorted_;
  std::vector<uint32_t> rank_;
  uint32_t mask_size_ = 0;
  uint64_t fingerprint_ = 0;
};

}  // namespace di::engine::constrain
