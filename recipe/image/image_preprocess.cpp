// prepare_image: the reference V4.1 preprocessing order — decode, cap the long side for low
// detail, refuse oversized images, fit the token grid (kept within WebP's side limit), resize
// keeping the aspect ratio with grey padding, encode WebP.
#include "recipe/image/image_preprocess.h"

#include <webp/encode.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "recipe/image/resize.h"
#include "recipe/image/token_spec.h"

namespace di::recipe::image {
namespace {

constexpr uint64_t kWebpMaxSide = 16383;

// A very elongated image can fit the token budget only with a side above what WebP encodes;
// scale such a size into the limit (long side down to the patch grid, short side up to it so
// the area stays above the upscaling threshold) and fit again.
Result<ResizeResult> fit_within_webp(uint64_t width, uint64_t height, std::string_view field) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  const uint64_t patch = spec.patch_size();
  uint64_t w = width, h = height;
  for (int round = 0; round < 6; ++round) {
    Result<ResizeResult> fitted = spec.calc_resize(w, h);
    if (!fitted.is_ok()) return std::move(fitted).take_status().with_context(std::string(field));
    if (fitted->best_width <= kWebpMaxSide && fitted->best_height <= kWebpMaxSide) return fitted;
    const uint64_t long_side = std::max(fitted->best_width, fitted->best_height);
    const uint64_t short_side = std::min(fitted->best_width, fitted->best_height);
    const uint64_t scaled_long = kWebpMaxSide / patch * patch;
    const double scaled_short = std::round(double(short_side) * double(scaled_long) / double(long_side));
    const uint64_t s = (std::max<uint64_t>(1, uint64_t(scaled_short)) + patch - 1) / patch * patch;
    if (fitted->best_width >= fitted->best_height) {
      w = scaled_long;
      h = s;
    } else {
      w = s;
      h = scaled_long;
    }
  }
  return Status::internal(std::string(field) + ": no V4.1 size within " +
                          std::to_string(kWebpMaxSide) + " px for a " + std::to_string(width) +
                          "x" + std::to_string(height) + " image");
}

}  // namespace

Result<PreparedImage> prepare_pixels(const DecodedImage& image, const PreprocessOptions& options,
                                     std::string_view field) {
  const DecodedImage* current = &image;
  DecodedImage capped;
  if (options.detail == ImageDetail::kLow) {
    const uint32_t long_side = std::max(image.width, image.height);
    if (long_side > options.low_detail_max_dimension_px && options.low_detail_max_dimension_px > 0) {
      const double r = double(options.low_detail_max_dimension_px) / long_side;
      const uint32_t w = std::max<uint32_t>(1, uint32_t(std::lround(image.width * r)));
      const uint32_t h = std::max<uint32_t>(1, uint32_t(std::lround(image.height * r)));
      capped = resize_bicubic(image, w, h);
      current = &capped;
    }
  }
  if (current->width > options.max_dimension_px || current->height > options.max_dimension_px) {
    return Status::limit(std::string(field) + ": image is " + std::to_string(current->width) +
                         "x" + std::to_string(current->height) + " px, the limit is " +
                         std::to_string(options.max_dimension_px) + " px per side");
  }
  DI_ASSIGN_OR_RETURN(ResizeResult fit, fit_within_webp(current->width, current->height, field));
  const uint32_t bw = static_cast<uint32_t>(fit.best_width);
  const uint32_t bh = static_cast<uint32_t>(fit.best_height);
  DecodedImage resized = resize_and_pad(*current, bw, bh);

  uint8_t* encoded = nullptr;
  const size_t n = WebPEncodeRGB(resized.pixels.data(), int(bw), int(bh), int(bw) * 3,
                                 static_cast<float>(options.webp_quality), &encoded);
  std::unique_ptr<uint8_t, void (*)(void*)> guard(encoded, WebPFree);
  if (n == 0 || encoded == nullptr) {
    return Status::internal(std::string(field) + ": WebP encoding of a " + std::to_string(bw) +
                            "x" + std::to_string(bh) + " image failed");
  }
  PreparedImage out;
  out.webp.assign(encoded, encoded + n);
  out.width = bw;
  out.height = bh;
  out.num_tokens = fit.num_tokens;
  out.source_type = image.media_type;
  return out;
}

Result<PreparedImage> prepare_image(std::span<const uint8_t> encoded,
                                    const PreprocessOptions& options, std::string_view field) {
  DI_ASSIGN_OR_RETURN(DecodedImage decoded, decode_image(encoded, options.max_dimension_px, field));
  return prepare_pixels(decoded, options, field);
}

}  // namespace di::recipe::image
