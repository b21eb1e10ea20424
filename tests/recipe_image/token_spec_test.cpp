// V4.1 image token accounting against the recipe's published vectors, plus the invariants
// every fitted size must satisfy.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "recipe/image/image_prompt.h"
#include "recipe/image/token_spec.h"

namespace di::recipe::image {
namespace {

struct Vector {
  uint64_t width, height, num_tokens, best_width, best_height, n_llm_h, n_llm_w;
};

std::vector<Vector> load_vectors() {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/v41_resize_vectors.tsv");
  std::vector<Vector> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    Vector v{};
    row >> v.width >> v.height >> v.num_tokens >> v.best_width >> v.best_height >> v.n_llm_h >>
        v.n_llm_w;
    out.push_back(v);
  }
  return out;
}

TEST(ImageTokenSpec, MatchesPublishedV41Vectors) {
  const auto vectors = load_vectors();
  ASSERT_EQ(vectors.size(), 36u);
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  for (const Vector& v : vectors) {
    auto r = spec.calc_resize(v.width, v.height);
    ASSERT_TRUE(r.is_ok()) << v.width << "x" << v.height << ": " << r.status().message();
    EXPECT_EQ(r->num_tokens, v.num_tokens) << v.width << "x" << v.height;
    EXPECT_EQ(r->best_width, v.best_width) << v.width << "x" << v.height;
    EXPECT_EQ(r->best_height, v.best_height) << v.width << "x" << v.height;
    EXPECT_EQ(r->n_llm_h, v.n_llm_h) << v.width << "x" << v.height;
    EXPECT_EQ(r->n_llm_w, v.n_llm_w) << v.width << "x" << v.height;
  }
}

TEST(ImageTokenSpec, FittedSizesAreFixedPoints) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  for (const Vector& v : load_vectors()) {
    EXPECT_TRUE(spec.is_image_valid(v.best_width, v.best_height))
        << v.best_width << "x" << v.best_height;
  }
}

// Over a sweep of shapes (square, wide, tall, tiny, huge) the fit stays within the budget,
// lands on the patch grid, agrees with the token formula, and is stable when re-fitted.
TEST(ImageTokenSpec, EveryFitIsOnTheGridWithinBudgetAndStable) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  const uint64_t sides[] = {1, 2, 3, 7, 13, 14, 15, 41, 42, 43, 100, 333, 543, 544, 545,
                            1000, 1302, 1303, 2048, 4095, 8192, 12345, 16383, 40000};
  for (uint64_t w : sides) {
    for (uint64_t h : sides) {
      auto r = spec.calc_resize(w, h);
      ASSERT_TRUE(r.is_ok()) << w << "x" << h << ": " << r.status().message();
      EXPECT_LE(r->num_tokens, 1024u) << w << "x" << h;
      EXPECT_EQ(r->best_width % 14, 0u) << w << "x" << h;
      EXPECT_EQ(r->best_height % 14, 0u) << w << "x" << h;
      EXPECT_EQ(r->num_tokens, r->n_llm_h * (r->n_llm_w + 1) + 2) << w << "x" << h;
      EXPECT_EQ(r->n_llm_h, (r->best_height / 14 + 2) / 3) << w << "x" << h;
      EXPECT_TRUE(spec.is_image_valid(r->best_width, r->best_height)) << w << "x" << h;
    }
  }
}

TEST(ImageTokenSpec, RejectsEmptyAndAbsurdSizesWithAClearError) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  auto zero = spec.calc_resize(0, 10);
  ASSERT_FALSE(zero.is_ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("0x10"), std::string::npos);
  auto huge = spec.calc_resize(ImageTokenSpec::kMaxSide + 1, 1);
  ASSERT_FALSE(huge.is_ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
}

TEST(ImagePrompt, AdjustmentCountsOnePlaceholderTokenPerImage) {
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  std::vector<PreparedImage> images(2);
  images[0].num_tokens = *spec.calc_token_len(1920, 1080);  // 968
  images[1].num_tokens = *spec.calc_token_len(640, 480);    // 206
  EXPECT_EQ(image_token_adjustment(images), 968u + 206u - 2u);
  EXPECT_EQ(image_token_adjustment({}), 0u);
}

}  // namespace
}  // namespace di::recipe::image
