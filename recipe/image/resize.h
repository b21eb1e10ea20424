// Pixel resampling for preprocessing: bicubic resize and centred padding of 8-bit RGB images.
// Works on DecodedImage values only; which size to produce is the caller's decision.
#pragma once

#include <cstdint>

#include "recipe/image/image_decoder.h"

namespace di::recipe::image {

// Padding colour for letterboxing: mid grey, the value the model's normalisation maps to 0.
inline constexpr uint8_t kPadValue = 127;

// Bicubic (a = -0.75, pixel centres at +0.5, edges replicated), the interpolation of the
// reference preprocessor (OpenCV INTER_CUBIC). Sides must be positive.
DecodedImage resize_bicubic(const DecodedImage& src, uint32_t width, uint32_t height);

// Scales `src` to fit inside width x height keeping its aspect ratio (the fitted side rounded
// half to even) and centres it on kPadValue.
DecodedImage resize_and_pad(const DecodedImage& src, uint32_t width, uint32_t height);

}  // namespace di::recipe::image
