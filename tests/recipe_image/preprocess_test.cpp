// prepare_image / prepare_pixels: output size and token count equal the V4.1 fit, the WebP
// output decodes to that size, letterboxing keeps the picture and pads with grey, and the
// low-detail cap applies before fitting.
#include <gtest/gtest.h>
#include <webp/decode.h>

#include <fstream>
#include <iterator>

#include "recipe/image/image_preprocess.h"
#include "recipe/image/resize.h"
#include "recipe/image/token_spec.h"

namespace di::recipe::image {
namespace {

Bytes read_fixture(const std::string& name) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/" + name, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

DecodedImage solid(uint32_t w, uint32_t h, uint8_t r, uint8_t g, uint8_t b) {
  DecodedImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(size_t(w) * h * 3);
  for (size_t i = 0; i < size_t(w) * h; ++i) {
    img.pixels[3 * i] = r;
    img.pixels[3 * i + 1] = g;
    img.pixels[3 * i + 2] = b;
  }
  return img;
}

// Decodes the WebP output with libwebp (independent of the encoder call under test).
DecodedImage decode_webp(const Bytes& webp) {
  DecodedImage out;
  int w = 0, h = 0;
  uint8_t* px = WebPDecodeRGB(webp.data(), webp.size(), &w, &h);
  EXPECT_NE(px, nullptr);
  if (!px) return out;
  out.width = w;
  out.height = h;
  out.pixels.assign(px, px + size_t(w) * h * 3);
  WebPFree(px);
  return out;
}

TEST(ImagePreprocess, EveryFixtureBecomesAWebPOfTheFittedSize) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  for (const char* file : {"rgb.png", "rgba.png", "baseline.jpg", "progressive.jpg", "anim.gif",
                           "lossless.webp", "alpha.webp", "gray16.png"}) {
    const Bytes data = read_fixture(file);
    auto header = read_image_header(data, file);
    ASSERT_TRUE(header.is_ok()) << file;
    auto fit = spec.calc_resize(header->width, header->height);
    auto out = prepare_image(data, PreprocessOptions{}, file);
    ASSERT_TRUE(out.is_ok()) << file << ": " << out.status().message();
    EXPECT_EQ(out->width, fit->best_width) << file;
    EXPECT_EQ(out->height, fit->best_height) << file;
    EXPECT_EQ(out->num_tokens, fit->num_tokens) << file;
    ASSERT_GE(out->webp.size(), 12u);
    EXPECT_EQ(std::string(out->webp.begin(), out->webp.begin() + 4), "RIFF");
    EXPECT_EQ(std::string(out->webp.begin() + 8, out->webp.begin() + 12), "WEBP");
    int w = 0, h = 0;
    ASSERT_TRUE(WebPGetInfo(out->webp.data(), out->webp.size(), &w, &h)) << file;
    EXPECT_EQ(uint32_t(w), out->width);
    EXPECT_EQ(uint32_t(h), out->height);
  }
}

TEST(ImagePreprocess, LetterboxKeepsThePictureAndPadsWithGrey) {
  // 1000x100 fits to a grid whose aspect differs, so it is padded top and bottom.
  const DecodedImage img = solid(1000, 100, 200, 40, 90);
  auto out = prepare_pixels(img, PreprocessOptions{}, "f");
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const DecodedImage px = decode_webp(out->webp);
  ASSERT_EQ(px.width, out->width);
  auto at = [&](uint32_t x, uint32_t y, int c) { return int(px.pixels[(size_t(y) * px.width + x) * 3 + c]); };
  const uint32_t cx = px.width / 2, cy = px.height / 2;
  EXPECT_NEAR(at(cx, cy, 0), 200, 6);
  EXPECT_NEAR(at(cx, cy, 1), 40, 6);
  EXPECT_NEAR(at(cx, cy, 2), 90, 6);
  const double scaled_h = 100.0 * px.width / 1000.0;
  if (scaled_h + 4 < px.height) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(at(cx, 0, c), kPadValue, 6);
      EXPECT_NEAR(at(cx, px.height - 1, c), kPadValue, 6);
    }
  }
}

TEST(ImagePreprocess, LowDetailCapsTheLongSideBeforeFitting) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  const DecodedImage img = solid(2000, 1000, 10, 20, 30);
  PreprocessOptions low;
  low.detail = ImageDetail::kLow;
  auto l = prepare_pixels(img, low, "f");
  ASSERT_TRUE(l.is_ok());
  EXPECT_EQ(l->num_tokens, *spec.calc_token_len(512, 256));
  auto h = prepare_pixels(img, PreprocessOptions{}, "f");
  ASSERT_TRUE(h.is_ok());
  EXPECT_EQ(h->num_tokens, *spec.calc_token_len(2000, 1000));
  EXPECT_LT(l->num_tokens, h->num_tokens);
}

TEST(ImagePreprocess, ManyImagesLowerTheDimensionLimit) {
  PreprocessOptions opts;
  opts.max_dimension_px = 4096;
  auto r = prepare_pixels(solid(5000, 10, 0, 0, 0), opts, "images[20]");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimit);
  EXPECT_EQ(r.status().message().rfind("images[20]: ", 0), 0u);
}

TEST(ImagePreprocess, ExtremelyThinImagesStayWithinWebPLimits) {
  // 1 x 8192 fits to a grid taller than WebP's 16383 px limit before rescaling.
  auto r = prepare_pixels(solid(1, 8192, 1, 2, 3), PreprocessOptions{}, "f");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_LE(r->height, 16383u);
  EXPECT_LE(r->num_tokens, 1024u);
  EXPECT_TRUE(ImageTokenSpec::v41().is_image_valid(r->width, r->height));
}

TEST(Resize, ConstantImagesStayConstantAndSameSizeIsIdentity) {
  const DecodedImage img = solid(37, 23, 17, 130, 250);
  for (auto [w, h] : {std::pair{37u, 23u}, {100u, 80u}, {5u, 3u}, {1u, 1u}}) {
    const DecodedImage out = resize_bicubic(img, w, h);
    ASSERT_EQ(out.pixels.size(), size_t(w) * h * 3);
    for (size_t i = 0; i < out.pixels.size(); i += 3) {
      ASSERT_EQ(out.pixels[i], 17);
      ASSERT_EQ(out.pixels[i + 1], 130);
      ASSERT_EQ(out.pixels[i + 2], 250);
    }
  }
}

TEST(Resize, RampStaysMonotonicWhenScaled) {
  DecodedImage ramp = solid(64, 4, 0, 0, 0);
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 64; ++x) {
      for (int c = 0; c < 3; ++c) ramp.pixels[(y * 64 + x) * 3 + c] = uint8_t(x * 4);
    }
  }
  for (uint32_t w : {16u, 100u}) {
    const DecodedImage out = resize_bicubic(ramp, w, 4);
    for (uint32_t x = 1; x < w; ++x) {
      EXPECT_GE(out.pixels[x * 3], out.pixels[(x - 1) * 3]) << "w=" << w << " x=" << x;
    }
  }
}

}  // namespace
}  // namespace di::recipe::image
