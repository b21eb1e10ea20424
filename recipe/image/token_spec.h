// ImageTokenSpec: how many model tokens a DeepSeek V4.1 image occupies and the pixel size the
// image is resized to before it is sent. Pure arithmetic: no pixels, no decoding, no I/O.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::recipe::image {

// The fitted size of one image and the token grid it becomes.
struct ResizeResult {
  uint64_t n_llm_h = 0;      // token rows
  uint64_t n_llm_w = 0;      // token columns (each row also ends with one newline token)
  uint64_t best_height = 0;  // resized height in pixels, a multiple of the patch size
  uint64_t best_width = 0;   // resized width in pixels, a multiple of the patch size
  uint64_t num_tokens = 0;   // n_llm_h * (n_llm_w + 1) + 2 (start and end tokens)

  bool operator==(const ResizeResult&) const = default;
};

// V4.1: 14 px patches, a 3x3 spatial downsample, at most 1024 tokens per image, and images
// whose area is below 544*544 scaled up to about that area first (an area target, not a
// per-side minimum).
class ImageTokenSpec {
 public:
  static constexpr ImageTokenSpec v41() { return ImageTokenSpec(14, 3, 1024, 544 * 544); }

  uint64_t patch_size() const { return patch_size_; }
  uint64_t downsample_ratio() const { return downsample_ratio_; }
  uint64_t max_n_token() const { return max_n_token_; }

  // Largest side calc_resize accepts; far above any decodable image, it keeps the float
  // arithmetic exact enough and every product inside 64 bits.
  static constexpr uint64_t kMaxSide = uint64_t{1} << 24;

  // The fitted size and token count of a width x height image. Fitting is repeated until it
  // reaches a fixed point (at most 10 rounds). Errors: a zero or oversized side
  // (kInvalidArgument), no fixed point (kInternal).
  Result<ResizeResult> calc_resize(uint64_t width, uint64_t height) const;
  Result<uint64_t> calc_token_len(uint64_t width, uint64_t height) const;
  // True when fitting leaves width x height unchanged (the size a preprocessed image has).
  bool is_image_valid(uint64_t width, uint64_t height) const;

 private:
  constexpr ImageTokenSpec(uint64_t patch, uint64_t downsample, uint64_t max_tokens,
                           uint64_t min_pixels)
      : patch_size_(patch), downsample_ratio_(downsample), max_n_token_(max_tokens),
        min_pixels_(min_pixels) {}

  ResizeResult resize_once(uint64_t width, uint64_t height) const;
  ResizeResult grid_for(uint64_t best_height, uint64_t best_width) const;
  ResizeResult solve_max_grid(uint64_t height, uint64_t width) const;

  uint64_t patch_size_;
  uint64_t downsample_ratio_;
  uint64_t max_n_token_;
  uint64_t min_pixels_;
};

}  // namespace di::recipe::image
