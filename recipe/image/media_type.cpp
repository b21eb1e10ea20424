// MediaType parsing and signature sniffing.
#include "recipe/image/media_type.h"

#include <cstring>

namespace di::recipe::image {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::span<const uint8_t> data, const char* sig, size_t n, size_t at = 0) {
  return data.size() >= at + n && std::memcmp(data.data() + at, sig, n) == 0;
}

}  // namespace

std::optional<MediaType> parse_media_type(std::string_view mime) {
  mime = trim(mime.substr(0, mime.find(';')));
  const size_t slash = mime.find('/');
  if (slash == std::string_view::npos || !iequals(mime.substr(0, slash), "image")) return {};
  const std::string_view sub = mime.substr(slash + 1);
  if (iequals(sub, "jpeg") || iequals(sub, "jpg")) return MediaType::kJpeg;
  if (iequals(sub, "png")) return MediaType::kPng;
  if (iequals(sub, "gif")) return MediaType::kGif;
  if (iequals(sub, "webp")) return MediaType::kWebp;
  return {};
}

std::optional<MediaType> sniff_media_type(std::span<const uint8_t> data) {
  if (starts_with(data, "\xFF\xD8\xFF", 3)) return MediaType::kJpeg;
  if (starts_with(data, "\x89PNG\r\n\x1A\n", 8)) return MediaType::kPng;
  if (starts_with(data, "GIF87a", 6) || starts_with(data, "GIF89a", 6)) return MediaType::kGif;
  if (starts_with(data, "RIFF", 4) && starts_with(data, "WEBP", 4, 8)) return MediaType::kWebp;
  return {};
}

std::string_view mime_of(MediaType type) {
  switch (type) {
    case MediaType::kJpeg: return "image/jpeg";
    case MediaType::kPng: return "image/png";
    case MediaType::kGif: return "image/gif";
    case MediaType::kWebp: return "image/webp";
  }
  return "application/octet-stream";
}

}  // namespace di::recipe::image
