// TokenVocabulary: validation of the id lists and the preorder byte trie.
#include "engine/constrain/token_vocabulary.h"

#include <algorithm>

namespace di::engine::constrain {

Result<TokenVocabulary> TokenVocabulary::create(std::vector<std::string> tokens, std::vector<uint32_t> eos_ids,
                                                std::vector<uint32_t> special_ids, uint32_t mask_size) {
  TokenVocabulary v;
  const uint32_t n = static_cast<uint32_t>(tokens.size());
  if (n == 0) return Status::invalid_argument("vocabulary: no tokens");
  if (mask_size == 0) mask_size = n;
  if (mask_size < n) {
    return Status::invalid_argument("vocabulary: mask_size " + std::to_string(mask_size) + " is smaller than the " +
                                    std::to_string(n) + " tokens");
  }
  v.kind_.assign(n, kNormal);
  for (uint32_t id : special_ids) {
    if (id >= n) return Status::invalid_argument("vocabulary: special id " + std::to_string(id) + " out of range");
    v.kind_[id] = kSpecial;
  }
  for (uint32_t id : eos_ids) {
    if (id >= n) return Status::invalid_argument("vocabulary: eos id " + std::to_string(id) + " out of range");
    v.kind_[id] = kEos;
  }
  v.tokens_ = std::move(tokens);
  v.eos_ids_ = std::move(eos_ids);
  v.mask_size_ = mask_size;

  for (uint32_t id = 0; id < n; ++id) {
    if (v.kind_[id] == kNormal && !v.tokens_[id].empty()) v.sorted_.push_back(id);
  }
  std::sort(v.sorted_.begin(), v.sorted_.end(),
            [&](uint32_t a, uint32_t b) { return v.tokens_[a] < v.tokens_[b] || (v.tokens_[a] == v.tokens_[b] && a < b); });
  v.rank_.assign(n, UINT32_MAX);
  for (uint32_t r = 0; r < v.sorted_.size(); ++r) v.rank_[v.sorted_[r]] = r;

  // Preorder trie from the sorted list: a token shares its first lcp bytes with the previous one.
  // Two tokens with equal bytes (possible in odd vocabularies) get one node each so both ids are
  // reachable; the second is a child-less sibling at the same depth.
  std::vector<uint32_t> open;  // node index per depth-1 on the current path
  const std::string* prev = nullptr;
  uint64_t h = 1469598103934665603ull;
  for (uint32_t id : v.sorted_) {
    const std::string& s = v.tokens_[id];
    size_t lcp = 0;
    if (prev) {
      while (lcp < s.size() && lcp < prev->size() && s[lcp] == (*prev)[lcp]) ++lcp;
      if (lcp == s.size() && lcp == prev->size()) --lcp;  // duplicate: re-open the last node
    }
    while (open.size() > lcp) {
      v.trie_[open.back()].end = static_cast<uint32_t>(v.trie_.size());
      open.pop_back();
    }
    for (size_t d = lcp; d < s.size(); ++d) {
      open.push_back(static_cast<uint32_t>(v.trie_.size()));
      v.trie_.push_back(TrieNode{uint8_t(s[d]), uint16_t(d + 1), -1, 0});
    }
    v.trie_[open.back()].token = static_cast<int32_t>(id);
    prev = &s;
  }
  while (!open.empty()) {
    v.trie_[open.back()].end = static_cast<uint32_t>(v.trie_.size());
    open.pop_back();
  }
  for (uint32_t id = 0; id < n; ++id) {
    for (unsigned char c : v.tokens_[id]) h = (h ^ c) * 1099511628211ull;
    h = (h ^ (0x100u + v.kind_[id])) * 1099511628211ull;
  }
  v.fingerprint_ = h ^ mask_size;
  return v;
}

}  // namespace di::engine::constrain
