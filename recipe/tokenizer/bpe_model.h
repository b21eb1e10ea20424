// The BPE model of a byte-level tokenizer: vocab and merges keyed by raw bytes (the ByteLevel
// spelling is undone at load), and the merge loop that turns one pre-token into ids. Knows
// nothing of pre-tokenization, added tokens or decoding.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "recipe/tokenizer/flat_tables.h"

namespace di::recipe {

struct BpeConfig {
  bool ignore_merges = false;
  bool byte_fallback = false;
  bool fuse_unk = false;
  int32_t unk_id = -1;  // -1: no unk token; unknown symbols are dropped
};

class BpeModel {
 public:
  BpeModel() { byte_ids_.fill(-1); byte_fallback_ids_.fill(-1); }

  // vocab: (alphabet spelling, id) pairs; merges: (left, right) spellings in rank order.
  // Errors name the offending entry: "model.merges[12]: ..." (kParse).
  static Result<BpeModel> build(const std::vector<std::pair<std::string, int32_t>>& vocab,
                                const std::vector<std::pair<std::string, std::string>>& merges,
                                const BpeConfig& config);

  // Appends the ids of one pre-token (raw bytes, non-empty) to `out`.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  // Id of a raw byte string in the vocab, or -1.
  int32_t find_bytes(std::string_view bytes) const { return by_bytes_.find(bytes); }
  const BpeConfig& config() const { return config_; }
  size_t num_merges() const { return merges_.size(); }

 private:
  void merge_symbols(std::string_view word, std::vector<int32_t>& out) const;

  BpeConfig config_;
  BytesToId by_bytes_;                      // tokens reachable from bytes
  PairMerges merges_;
  std::array<int32_t, 256> byte_ids_;       // single-byte tokens
  std::array<int32_t, 256> byte_fallback_ids_;  // "<0xXX>" tokens when byte_fallback
};

}  // namespace di::recipe
