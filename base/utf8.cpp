// UTF-8 checks per RFC 3629 table 3-7 (well-formed byte sequences).
#include "base/utf8.h"

#include <cstdint>

namespace di {
namespace {

// Returns the length of the well-formed sequence starting at s[i], 0 if ill-formed, or -1 if it
// is a valid but truncated prefix at the end of the input.
int sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  int n;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  for (int k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -1;
    const uint8_t t = b(i + k);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (t < l || t > h) return 0;
  }
  return n;
}

}  // namespace

bool utf8_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = sequence_length(s, i);
    if (n <= 0) return false;
    i += n;
  }
  return true;
}

size_t utf8_complete_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const int n = sequence_length(s, i);
    if (n < 0) return i;
    i += n == 0 ? 1 : n;
  }
  return i;
}

}  // namespace di

namespace di {

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const int n = sequence_length(s, i);
    if (n > 0) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    // The maximal subpart: the lead byte plus the continuation bytes that were still valid.
    const uint8_t c = static_cast<uint8_t>(s[i]);
    size_t len = 1;
    int need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
    uint8_t lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    uint8_t hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (int k = 0; k < need && i + len < s.size(); ++k) {
      const uint8_t t = static_cast<uint8_t>(s[i + len]);
      if (t < lo || t > hi) break;
      ++len;
      lo = 0x80;
      hi = 0xBF;
    }
    out.append("\xEF\xBF\xBD");
    i += len;
  }
  return out;
}

}  // namespace di

namespace di {

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  const size_t cut = utf8_complete_prefix(pending_);
  std::string text = utf8_lossy(std::string_view(pending_).substr(0, cut));
  pending_.erase(0, cut);
  return text;
}

std::string Utf8Stream::finish() {
  std::string rest = utf8_lossy(pending_);
  pending_.clear();
  return rest;
}

}  // namespace di
