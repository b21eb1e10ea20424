// Test helper: image bytes for request bodies — a fixture file's bytes and standard base64, so
// tests can send images as data URLs. Standard library only.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

namespace di::testing {

inline std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// RFC 4648 base64 with padding.
inline std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(k[(v >> s) & 63]);
  }
  if (i < in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= uint8_t(in[i + 1]) << 8;
    out.push_back(k[(v >> 18) & 63]);
    out.push_back(k[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? k[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace di::testing
