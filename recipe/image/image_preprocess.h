// prepare_image: encoded image bytes → the V4.1 model input (WebP at the fitted size) and the
// number of prompt tokens it occupies. Composes decode, the low-detail cap, token fitting,
// resize/pad and WebP encoding; does no I/O and knows nothing of requests.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "recipe/image/image_decoder.h"
#include "recipe/image/image_source.h"

namespace di::recipe::image {

struct PreprocessOptions {
  ImageDetail detail = ImageDetail::kHigh;
  uint32_t max_dimension_px = 8192;           // source sides above this are refused
  uint32_t low_detail_max_dimension_px = 512;  // long-side cap applied when detail is low
  int webp_quality = 90;
};

// One image ready for the model.
struct PreparedImage {
  Bytes webp;               // the resized image, WebP-encoded
  uint32_t width = 0;       // its size: a fixed point of ImageTokenSpec::v41()
  uint32_t height = 0;
  uint64_t num_tokens = 0;  // model tokens it occupies (its placeholder counts as one of them)
  MediaType source_type = MediaType::kPng;  // the format it arrived in
};

// Fits already-decoded pixels (the low-detail cap, the token budget, WebP's 16383 px limit),
// resizes with padding, and encodes.
Result<PreparedImage> prepare_pixels(const DecodedImage& image, const PreprocessOptions& options,
                                     std::string_view field);

// decode_image + prepare_pixels. Errors start with `field` (see decode_image).
Result<PreparedImage> prepare_image(std::span<const uint8_t> encoded,
                                    const PreprocessOptions& options, std::string_view field);

}  // namespace di::recipe::image
