// The normalizer step: none, or a sequence of Unicode normalization forms (NFC, NFD, NFKC,
// NFKD via libutf8proc). Other normalizer types are rejected at load. Knows nothing of tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace di::recipe {

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };

class Normalizer {
 public:
  void add(NormalForm form) { forms_.push_back(form); }
  bool is_identity() const { return forms_.empty(); }
  // Normalizes well-formed UTF-8 `text` into `out` (replacing its contents).
  Status apply(std::string_view text, std::string& out) const;

 private:
  std::vector<NormalForm> forms_;
};

}  // namespace di::recipe
