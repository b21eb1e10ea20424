// ImageSource: one image reference taken from a request (http(s) URL, data URL, or bytes from
// a base64 block), checked at conversion time. Holds no decoded pixels and does no network I/O;
// ImageResolver turns sources into prepared images.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {

// Requested detail: `low` caps the long side (512 px by default) before token fitting; the
// other levels only go through token fitting.
enum class ImageDetail { kLow, kHigh, kOriginal, kAuto };

// "low" | "high" | "original" | "auto" (exact, lowercase as the APIs spell them).
std::optional<ImageDetail> parse_image_detail(std::string_view text);

// Longest external URL accepted, in UTF-8 bytes.
inline constexpr size_t kMaxImageUrlLen = 8192;

struct ImageSource {
  enum class Kind { kUrl, kDataUrl, kBytes };
  Kind kind = Kind::kBytes;
  std::string url;  // kUrl: the http(s) URL; kDataUrl: the whole data URL
  Bytes data;       // kBytes: the encoded image
  ImageDetail detail = ImageDetail::kHigh;
  // Where the image sits in the request ("messages[1].content[2].image_url.url"); every error
  // about this image starts with it. Empty: errors say "images[<index>]".
  std::string field;
};

// True when the first four bytes spell "http" in any case (the recipe's test for an external
// image reference; the full URL is validated when it is fetched).
bool is_http_url(std::string_view url);

// An `image_url` value (Chat Completions image_url.url, Responses input_image.image_url,
// Messages url source). http(s) → kUrl (at most kMaxImageUrlLen bytes); otherwise it must be a
// base64 data URL of a supported image type → kDataUrl. The body is decoded at resolve time.
// Errors: kLimit (URL too long), kInvalidArgument (not a URL / not base64 / bad data URL),
// kUnsupported (media type), each message starting with `field`.
Result<ImageSource> image_source_from_url(std::string_view url, ImageDetail detail,
                                          std::string field);

// A base64 block with a declared media type (Messages `source: {type: base64, media_type,
// data}`): the media type must be jpeg/png/gif/webp, the data must decode (missing padding is
// tolerated) and be non-empty → kBytes.
Result<ImageSource> image_source_from_base64(std::string_view media_type, std::string_view data,
                                             ImageDetail detail, std::string field);

// Encoded bytes the caller already holds (no checks until resolve).
ImageSource image_source_from_bytes(Bytes data, ImageDetail detail, std::string field);

}  // namespace di::recipe::image
