// Parses a comma-separated token id list ("5,17,42") from a CLI flag, for the commands that take
// ids directly (logits, generate). Rejects empty items, signs and overflow with a message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace di::cli {

inline bool parse_token_ids(const std::string& text, std::vector<int32_t>& out, std::string& error) {
  out.clear();
  size_t i = 0;
  while (i <= text.size()) {
    const size_t end = text.find(',', i) == std::string::npos ? text.size() : text.find(',', i);
    const std::string item = text.substr(i, end - i);
    if (item.empty() || item.size() > 10 || item.find_first_not_of("0123456789") != std::string::npos) {
      error = "expected comma-separated non-negative integers, got '" + item + "'";
      return false;
    }
    const int64_t v = std::stoll(item);
    if (v > INT32_MAX) {
      error = "token id " + item + " is too large";
      return false;
    }
    out.push_back(static_cast<int32_t>(v));
    i = end + 1;
  }
  return true;
}

}  // namespace di::cli
