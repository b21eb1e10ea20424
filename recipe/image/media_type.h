// MediaType: the four image formats the recipe accepts (jpeg, png, gif, webp), read either
// from a declared MIME type or from the bytes' signature. Knows nothing of decoding.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace di::recipe::image {

using Bytes = std::vector<uint8_t>;

enum class MediaType { kJpeg, kPng, kGif, kWebp };

// "image/png", "IMAGE/JPG; q=1" → the type; parameters after ';' are ignored, matching is
// ASCII case-insensitive, surrounding spaces are trimmed, image/jpg is an alias of image/jpeg.
std::optional<MediaType> parse_media_type(std::string_view mime);

// The type whose file signature starts `data` (JPEG FF D8 FF, PNG 89 50 4E 47 0D 0A 1A 0A,
// GIF87a/GIF89a, RIFF....WEBP), or nothing.
std::optional<MediaType> sniff_media_type(std::span<const uint8_t> data);

std::string_view mime_of(MediaType type);

// The message clients see for bytes that are none of the four formats.
inline constexpr std::string_view kUnsupportedImageMessage =
    "You have uploaded an unsupported image. Please make sure your image is valid and has one "
    "of the following formats: webp, png, jpeg, and gif.";

}  // namespace di::recipe::image
