// Separable bicubic resampling: a horizontal pass into floats, then a vertical pass with
// rounding and clamping to 8 bits.
#include "recipe/image/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace di::recipe::image {
namespace {

constexpr float kA = -0.75f;

// Keys' cubic convolution weights for a fractional offset t in [0, 1).
void cubic_weights(float t, float w[4]) {
  const float x0 = 1.0f + t, x1 = t, x2 = 1.0f - t;
  w[0] = ((kA * x0 - 5 * kA) * x0 + 8 * kA) * x0 - 4 * kA;
  w[1] = ((kA + 2) * x1 - (kA + 3)) * x1 * x1 + 1;
  w[2] = ((kA + 2) * x2 - (kA + 3)) * x2 * x2 + 1;
  w[3] = 1.0f - w[0] - w[1] - w[2];
}

struct Taps {
  std::vector<int32_t> index;  // 4 source indices per output position
  std::vector<float> weight;   // 4 weights per output position
};

Taps make_taps(uint32_t src_len, uint32_t dst_len) {
  Taps t;
  t.index.resize(size_t(dst_len) * 4);
  t.weight.resize(size_t(dst_len) * 4);
  const double scale = static_cast<double>(src_len) / dst_len;
  for (uint32_t d = 0; d < dst_len; ++d) {
    const double f = (d + 0.5) * scale - 0.5;
    const double fl = std::floor(f);
    const int32_t s = static_cast<int32_t>(fl);
    cubic_weights(static_cast<float>(f - fl), &t.weight[size_t(d) * 4]);
    for (int k = 0; k < 4; ++k) {
      t.index[size_t(d) * 4 + k] = std::clamp<int32_t>(s - 1 + k, 0, int32_t(src_len) - 1);
    }
  }
  return t;
}

uint32_t round_half_even(double v) {
  return static_cast<uint32_t>(std::max(0.0, std::nearbyint(v)));  // FE_TONEAREST: ties to even
}

}  // namespace

DecodedImage resize_bicubic(const DecodedImage& src, uint32_t width, uint32_t height) {
  DecodedImage out;
  out.width = width;
  out.height = height;
  out.media_type = src.media_type;
  if (width == src.width && height == src.height) {
    out.pixels = src.pixels;
    return out;
  }
  const Taps tx = make_taps(src.width, width);
  const Taps ty = make_taps(src.height, height);
  // Horizontal pass over every source row.
  std::vector<float> rows(size_t(src.height) * width * 3);
  for (uint32_t y = 0; y < src.height; ++y) {
    const uint8_t* in = &src.pixels[size_t(y) * src.width * 3];
    float* row = &rows[size_t(y) * width * 3];
    for (uint32_t x = 0; x < width; ++x) {
      const int32_t* ix = &tx.index[size_t(x) * 4];
      const float* wx = &tx.weight[size_t(x) * 4];
      for (int c = 0; c < 3; ++c) {
        float acc = 0;
        for (int k = 0; k < 4; ++k) acc += wx[k] * in[size_t(ix[k]) * 3 + c];
        row[size_t(x) * 3 + c] = acc;
      }
    }
  }
  out.pixels.resize(size_t(width) * height * 3);
  for (uint32_t y = 0; y < height; ++y) {
    const int32_t* iy = &ty.index[size_t(y) * 4];
    const float* wy = &ty.weight[size_t(y) * 4];
    uint8_t* dst = &out.pixels[size_t(y) * width * 3];
    for (size_t i = 0; i < size_t(width) * 3; ++i) {
      float acc = 0;
      for (int k = 0; k < 4; ++k) acc += wy[k] * rows[size_t(iy[k]) * width * 3 + i];
      dst[i] = static_cast<uint8_t>(std::clamp(std::lround(acc), 0L, 255L));
    }
  }
  return out;
}

DecodedImage resize_and_pad(const DecodedImage& src, uint32_t width, uint32_t height) {
  const double image_ratio = static_cast<double>(src.width) / src.height;
  const double target_ratio = static_cast<double>(width) / height;
  uint32_t w = width, h = height;
  if (image_ratio > target_ratio) {
    h = std::clamp<uint32_t>(round_half_even(double(src.height) / src.width * width), 1, height);
  } else if (image_ratio < target_ratio) {
    w = std::clamp<uint32_t>(round_half_even(double(src.width) / src.height * height), 1, width);
  }
  DecodedImage scaled = resize_bicubic(src, w, h);
  if (w == width && h == height) return scaled;

  const uint32_t left = round_half_even((width - w) * 0.5);
  const uint32_t top = round_half_even((height - h) * 0.5);
  DecodedImage out;
  out.width = width;
  out.height = height;
  out.media_type = src.media_type;
  out.pixels.assign(size_t(width) * height * 3, kPadValue);
  for (uint32_t y = 0; y < h; ++y) {
    std::copy_n(&scaled.pixels[size_t(y) * w * 3], size_t(w) * 3,
                &out.pixels[(size_t(y + top) * width + left) * 3]);
  }
  return out;
}

}  // namespace di::recipe::image
