// decode_image against pixels Pillow decoded from the same files (tests/fixtures/recipe_image),
// and clear errors for unsupported, corrupt and oversized images.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "recipe/image/image_decoder.h"

namespace di::recipe::image {
namespace {

Bytes read_fixture(const std::string& name) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/" + name, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

TEST(ImageDecode, MatchesPillowOnEveryFixture) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/decode_manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  ASSERT_GE(manifest.size(), 12u);
  for (const auto& entry : manifest) {
    const std::string file = entry["file"];
    const Bytes data = read_fixture(file);
    const Bytes expected = read_fixture(file + ".rgb");
    auto img = decode_image(data, 8192, file);
    ASSERT_TRUE(img.is_ok()) << file << ": " << img.status().message();
    EXPECT_EQ(img->width, entry["width"].get<uint32_t>()) << file;
    EXPECT_EQ(img->height, entry["height"].get<uint32_t>()) << file;
    EXPECT_EQ(img->channels, 3u);
    EXPECT_EQ(std::string(mime_of(img->media_type)), "image/" + std::string(
        entry["format"] == "jpeg" ? "jpeg" : entry["format"].get<std::string>())) << file;
    ASSERT_EQ(img->pixels.size(), expected.size()) << file;
    int max_diff = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(int(img->pixels[i]) - int(expected[i])));
    }
    EXPECT_LE(max_diff, entry["max_abs_diff"].get<int>()) << file;
  }
}

TEST(ImageDecode, HeaderGivesTheSizeWithoutDecoding) {
  auto h = read_image_header(read_fixture("wide_9000x2.png"), "f");
  ASSERT_TRUE(h.is_ok()) << h.status().message();
  EXPECT_EQ(h->width, 9000u);
  EXPECT_EQ(h->height, 2u);
  EXPECT_EQ(h->media_type, MediaType::kPng);
}

TEST(ImageDecode, OversizedImageIsRefusedNamingTheField) {
  auto r = decode_image(read_fixture("wide_9000x2.png"), 8192, "messages[1].content[0]");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimit);
  EXPECT_EQ(r.status().message().rfind("messages[1].content[0]: ", 0), 0u);
  EXPECT_NE(r.status().message().find("9000x2"), std::string::npos) << r.status().message();
  EXPECT_TRUE(decode_image(read_fixture("wide_9000x2.png"), 9000, "f").is_ok());
}

TEST(ImageDecode, UnsupportedFormatGetsTheRecipeMessage) {
  auto r = decode_image(read_fixture("unsupported.bmp"), 8192, "images[2]");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(r.status().message(), "images[2]: " + std::string(kUnsupportedImageMessage));
}

TEST(ImageDecode, CorruptTruncatedAndEmptyDataAreErrorsNotCrashes) {
  auto truncated = decode_image(read_fixture("truncated.png"), 8192, "f");
  ASSERT_FALSE(truncated.is_ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(decode_image(Bytes{}, 8192, "f").is_ok());
  Bytes jpeg_head = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0};
  EXPECT_FALSE(decode_image(jpeg_head, 8192, "f").is_ok());
  Bytes webp = read_fixture("lossless.webp");
  webp.resize(webp.size() / 2);
  EXPECT_FALSE(decode_image(webp, 8192, "f").is_ok());
  Bytes gif = read_fixture("anim.gif");
  gif.resize(20);
  EXPECT_FALSE(decode_image(gif, 8192, "f").is_ok());
}

// Inputs the decoder fuzzer found: a progressive JPEG with an inconsistent Huffman table (stb's
// JPEG decoder asserted on it) and a 181-byte PNG declaring a 788 MB IDAT chunk (stb allocated
// it before noticing the data was missing). Both must be quick, clean errors.
TEST(ImageDecode, FuzzerFoundInputsAreCleanErrors) {
  for (const char* file : {"regressions/progressive_huffman.jpg", "regressions/idat_length_2gib.png"}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = decode_image(read_fixture(file), 8192, file);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2)) << file;
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().message().rfind(std::string(file) + ": ", 0), 0u);
    } else {
      EXPECT_EQ(r->pixels.size(), size_t(r->width) * r->height * 3) << file;
    }
  }
  EXPECT_FALSE(decode_image(read_fixture("regressions/idat_length_2gib.png"), 8192, "f").is_ok());
}

}  // namespace
}  // namespace di::recipe::image
