// ImageTokenSpec: the V4.1 fit of an image into its patch grid and token budget. The float
// steps (sqrt, ratios, truncation toward zero) follow the reference preprocessing exactly,
// because the token count must equal what the served model's preprocessor produces.
#include "recipe/image/token_spec.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace di::recipe::image {
namespace {

uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }
uint64_t div_up(uint64_t v, uint64_t m) { return (v + m - 1) / m; }
// Truncation toward zero of a finite, non-negative double (the reference's `as usize`).
uint64_t trunc_u64(double v) { return v <= 0.0 ? 0 : static_cast<uint64_t>(v); }

std::string size_text(uint64_t w, uint64_t h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

}  // namespace

ResizeResult ImageTokenSpec::grid_for(uint64_t best_height, uint64_t best_width) const {
  ResizeResult r;
  r.best_height = best_height;
  r.best_width = best_width;
  r.n_llm_h = div_up(best_height / patch_size_, downsample_ratio_);
  r.n_llm_w = div_up(best_width / patch_size_, downsample_ratio_);
  r.num_tokens = r.n_llm_h * (r.n_llm_w + 1) + 2;
  return r;
}

// The largest aspect-preserving grid within the budget: with ratio = h/w, a grid of
// w columns and w*ratio rows costs w*ratio*(w+1)+2 tokens; solving for w gives
// sqrt((max-2)/ratio + 1/4) - 1/2. Very thin images get a one-column or one-row grid.
ResizeResult ImageTokenSpec::solve_max_grid(uint64_t height, uint64_t width) const {
  const uint64_t cell = patch_size_ * downsample_ratio_;
  const double ratio = static_cast<double>(height) / static_cast<double>(width);
  const double max_w_f = std::sqrt((static_cast<double>(max_n_token_) - 2.0) / ratio + 0.25) - 0.5;
  const double max_h_f = max_w_f * ratio;
  uint64_t best_w = 0;
  uint64_t best_h = 0;
  if (max_w_f < 1.0) {
    const uint64_t max_w = 1;
    best_w = max_w * cell;
    best_h = (max_n_token_ - 2) / (max_w + 1) * cell;
  } else if (max_h_f < 1.0) {
    const uint64_t max_h = 1;
    best_w = ((max_n_token_ - 2) / max_h - 1) * cell;
    best_h = max_h * cell;
  } else {
    const double beta_w = static_cast<double>(trunc_u64(max_w_f) * cell) / static_cast<double>(width);
    const double beta_h = static_cast<double>(trunc_u64(max_h_f) * cell) / static_cast<double>(height);
    const double beta = std::min(beta_w, beta_h);
    const double patch = static_cast<double>(patch_size_);
    best_w = trunc_u64(static_cast<double>(width) * beta / patch) * patch_size_;
    best_h = trunc_u64(static_cast<double>(height) * beta / patch) * patch_size_;
  }
  return grid_for(best_h, best_w);
}

// One round: scale small images up to the minimum area, round each side up to the patch
// grid, and if the grid costs too many tokens solve for the largest grid that fits.
ResizeResult ImageTokenSpec::resize_once(uint64_t width, uint64_t height) const {
  const uint64_t pixels = width * height;
  if (pixels > 0 && pixels < min_pixels_) {
    const double scale = std::sqrt(static_cast<double>(min_pixels_) / static_cast<double>(pixels));
    width = trunc_u64(static_cast<double>(width) * scale);
    height = trunc_u64(static_cast<double>(height) * scale);
  }
  ResizeResult r = grid_for(round_up(height, patch_size_), round_up(width, patch_size_));
  if (r.num_tokens > max_n_token_) r = solve_max_grid(height, width);
  return r;
}

Result<ResizeResult> ImageTokenSpec::calc_resize(uint64_t width, uint64_t height) const {
  if (width == 0 || height == 0) {
    return Status::invalid_argument("image size " + size_text(width, height) +
                                    ": width and height must be positive");
  }
  if (width > kMaxSide || height > kMaxSide) {
    return Status::invalid_argument("image size " + size_text(width, height) +
                                    ": a side exceeds " + std::to_string(kMaxSide) + " px");
  }
  constexpr int kMaxIter = 10;
  ResizeResult r = resize_once(width, height);
  for (int i = 1; i < kMaxIter; ++i) {
    if (r.num_tokens > max_n_token_) {  // the solve guarantees this cannot happen
      return Status::internal("image size " + size_text(width, height) + ": fitted grid has " +
                              std::to_string(r.num_tokens) + " tokens, over the budget");
    }
    const ResizeResult next = resize_once(r.best_width, r.best_height);
    if (next == r) return r;
    r = next;
  }
  return Status::internal("image size " + size_text(width, height) +
                          ": token fitting did not converge in " + std::to_string(kMaxIter) +
                          " rounds (last " + size_text(r.best_width, r.best_height) + ", " +
                          std::to_string(r.num_tokens) + " tokens)");
}

Result<uint64_t> ImageTokenSpec::calc_token_len(uint64_t width, uint64_t height) const {
  DI_ASSIGN_OR_RETURN(ResizeResult r, calc_resize(width, height));
  return r.num_tokens;
}

bool ImageTokenSpec::is_image_valid(uint64_t width, uint64_t height) const {
  Result<ResizeResult> r = calc_resize(width, height);
  return r.is_ok() && r->best_width == width && r->best_height == height;
}

}  // namespace di::recipe::image
