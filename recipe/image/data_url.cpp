// data: URL splitting and body decoding, following the WHATWG "data: URL processor": the
// ';base64' marker may be followed by spaces and matched in any case, the body is
// percent-decoded first, and a '%' not followed by two hex digits stays literal.
#include "recipe/image/data_url.h"

#include <string>

#include "base/hex.h"
#include "recipe/image/base64.h"

namespace di::recipe::image {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// WHATWG strips leading and trailing ASCII whitespace (and C0 controls) around the type.
bool is_trim_char(char c) { return static_cast<unsigned char>(c) <= 0x20; }

}  // namespace

Result<DataUrl> parse_data_url(std::string_view url, std::string_view field) {
  if (url.size() < 5 || !iequals(url.substr(0, 5), "data:")) {
    return Status::invalid_argument(std::string(field) + ": not a data URL (expected 'data:')");
  }
  std::string_view rest = url.substr(5);
  const size_t comma = rest.find(',');
  if (comma == std::string_view::npos) {
    return Status::invalid_argument(std::string(field) + ": data URL has no ',' before its body");
  }
  std::string_view type = rest.substr(0, comma);
  while (!type.empty() && is_trim_char(type.front())) type.remove_prefix(1);
  while (!type.empty() && is_trim_char(type.back())) type.remove_suffix(1);

  DataUrl out;
  out.body = rest.substr(comma + 1);
  // ";base64" at the end, with optional spaces between ';' and "base64".
  if (type.size() >= 6 && iequals(type.substr(type.size() - 6), "base64")) {
    std::string_view head = type.substr(0, type.size() - 6);
    while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
    if (!head.empty() && head.back() == ';') {
      head.remove_suffix(1);
      out.base64 = true;
      type = head;
    }
  }
  out.media_type = std::string(type);
  return out;
}

size_t estimated_decoded_size(const DataUrl& url) {
  // Only a '%' followed by two hex digits shrinks the body; any other '%' stays a byte.
  const std::string_view b = url.body;
  size_t escapes = 0;
  for (size_t i = 0; i + 2 < b.size(); ++i) {
    if (b[i] == '%' && hex_digit_value(b[i + 1]) >= 0 && hex_digit_value(b[i + 2]) >= 0) {
      ++escapes;
      i += 2;
    }
  }
  const size_t percent_decoded = b.size() - 2 * escapes;
  return url.base64 ? percent_decoded / 4 * 3 : percent_decoded;
}

Result<Bytes> decode_data_url_body(const DataUrl& url, std::string_view field) {
  std::string decoded;
  decoded.reserve(url.body.size());
  const std::string_view b = url.body;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] == '%' && i + 2 < b.size()) {
      const int hi = hex_digit_value(b[i + 1]);
      const int lo = hex_digit_value(b[i + 2]);
      if (hi >= 0 && lo >= 0) {
        decoded.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    decoded.push_back(b[i]);
  }
  if (!url.base64) return Bytes(decoded.begin(), decoded.end());
  return decode_base64(decoded, field);
}

}  // namespace di::recipe::image
