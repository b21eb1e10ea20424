// Added tokens (tokenizer.json "added_tokens") and how they are found in text: leftmost-longest
// matching, one pass over the raw text for normalized:false tokens and one over normalized text
// for normalized:true tokens, with single_word / lstrip / rstrip as Hugging Face applies them.
// Knows nothing of BPE or pre-tokenization.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace di::recipe {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// One piece of text after added-token extraction: either an added token's id or a gap
// [begin, end) of ordinary text (token_id == -1).
struct AddedSplit {
  size_t begin;
  size_t end;
  int32_t token_id;
};

// A set of strings matched leftmost-longest, non-overlapping.
class AddedTokenMatcher {
 public:
  // `patterns[i]` is matched and reported as index i.
  void build(std::vector<std::string> patterns);
  bool empty() const { return patterns_.empty(); }
  // Finds the leftmost match at or after `from`; among matches starting there, the longest.
  bool find(std::string_view text, size_t from, size_t* begin, size_t* end, size_t* index) const;

 private:
  std::vector<std::string> patterns_;
  std::vector<uint32_t> sorted_;  // pattern indices in byte-lexicographic order
  bool first_byte_[256] = {};
};

class AddedVocabulary {
 public:
  // `tokens` as listed in tokenizer.json; `normalize_content` maps a normalized:true token's
  // content into the normalized text's form (identity when there is no normalizer).
  template <class Normalize>
  void build(std::vector<AddedToken> tokens, Normalize&& normalize_content) {
    tokens_ = std::move(tokens);
    std::vector<std::string> raw, norm;
    raw_ids_.clear();
    norm_ids_.clear();
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].content.empty()) continue;
      if (tokens_[i].normalized) {
        norm.push_back(normalize_content(tokens_[i].content));
        norm_ids_.push_back(static_cast<uint32_t>(i));
      } else {
        raw.push_back(tokens_[i].content);
        raw_ids_.push_back(static_cast<uint32_t>(i));
      }
    }
    raw_.build(std::move(raw));
    norm_.build(std::move(norm));
  }

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool has_raw() const { return !raw_.empty(); }
  bool has_normalized() const { return !norm_.empty(); }

  // Splits `text` around the normalized:false (normalized == false) or normalized:true
  // (normalized == true) tokens. Appends to `out`; gaps may be empty and are then omitted.
  void split(std::string_view text, bool normalized, std::vector<AddedSplit>& out) const;

 private:
  std::vector<AddedToken> tokens_;
  AddedTokenMatcher raw_, norm_;
  std::vector<uint32_t> raw_ids_, norm_ids_;  // matcher index -> index into tokens_
};

}  // namespace di::recipe
