// decode_image: encoded png/jpeg/gif/webp bytes → 8-bit RGB pixels, with the dimension limit
// checked from the header before any pixel memory is allocated. Transparency is flattened onto
// the inference background. Does no resizing and no I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {

// Transparent pixels are blended onto #FDFDFD, the background the model saw in training.
inline constexpr uint8_t kInferenceBackground = 0xFD;

struct DecodedImage {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t channels = 3;  // always RGB, row-major, no padding
  Bytes pixels;           // width * height * 3 bytes
  MediaType media_type = MediaType::kPng;
};

// The format and size the header declares, without decoding pixels.
struct ImageHeader {
  MediaType media_type = MediaType::kPng;
  uint32_t width = 0;
  uint32_t height = 0;
};
Result<ImageHeader> read_image_header(std::span<const uint8_t> data, std::string_view field);

// Decodes the image (the first frame of a GIF). Errors, each starting with `field`:
// kInvalidArgument (empty, corrupt or truncated data), kUnsupported (not one of the four
// formats; animated WebP), kLimit (a side above max_dimension, before or after decoding).
Result<DecodedImage> decode_image(std::span<const uint8_t> data, uint32_t max_dimension,
                                  std::string_view field);

}  // namespace di::recipe::image
