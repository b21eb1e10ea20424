// ImageResolver: request limits (count, per-image and total bytes, data URLs checked before
// decoding), order and token counts of the result, the quota rule (only successful calls
// count), the concurrency cap, and the default SSRF policy on URL sources.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "local_http_server.h"
#include "recipe/image/image_prompt.h"
#include "recipe/image/image_ref_source.h"
#include "recipe/image/image_resolver.h"
#include "recipe/image/token_spec.h"

namespace di::recipe::image {
namespace {

using testing::LocalHttpServer;

Bytes read_fixture(const std::string& name) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/" + name, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::string to_base64(const Bytes& b) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < b.size(); i += 3) {
    const uint32_t v = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    for (int s = 18; s >= 0; s -= 6) out += k[(v >> s) & 63];
  }
  if (i + 1 == b.size()) {
    const uint32_t v = b[i] << 16;
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == b.size()) {
    const uint32_t v = (b[i] << 16) | (b[i + 1] << 8);
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// Answers GET `path` with fixture `name`'s bytes as `content_type`, after `delay_ms`.
void serve_fixture(LocalHttpServer& server, const std::string& path, const std::string& name,
                   const std::string& content_type, int delay_ms = 0) {
  const Bytes bytes = read_fixture(name);
  server.serve(path, std::string(bytes.begin(), bytes.end()), content_type, delay_ms);
}

ImageSource bytes_source(const char* fixture) {
  return image_source_from_bytes(read_fixture(fixture), ImageDetail::kHigh, "");
}

TEST(ImageResolver, ResolvesDataUrlBytesAndUrlInOrder) {
  LocalHttpServer server;
  serve_fixture(server, "/a.jpg", "baseline.jpg", "image/jpeg");
  server.start();
  FetchOptions fetch;
  fetch.policy = DestinationPolicy::allow_all();
  const ImageResolver resolver(ImageLimits{}, fetch);

  const Bytes png = read_fixture("rgb.png");
  std::vector<ImageSource> sources;
  sources.push_back(*image_source_from_url("data:image/png;base64," + to_base64(png),
                                           ImageDetail::kHigh, "messages[0].content[0]"));
  sources.push_back(bytes_source("lossless.webp"));
  sources.push_back(*image_source_from_url(server.url("/a.jpg"), ImageDetail::kHigh, ""));
  ImageQuota quota;
  auto r = resolver.resolve(sources, quota);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  EXPECT_EQ((*r)[0].num_tokens, *spec.calc_token_len(37, 23));
  EXPECT_EQ((*r)[0].source_type, MediaType::kPng);
  EXPECT_EQ((*r)[1].num_tokens, *spec.calc_token_len(35, 22));
  EXPECT_EQ((*r)[1].source_type, MediaType::kWebp);
  EXPECT_EQ((*r)[2].num_tokens, *spec.calc_token_len(40, 30));
  EXPECT_EQ((*r)[2].source_type, MediaType::kJpeg);
  EXPECT_EQ(quota.image_count(), 3u);
  EXPECT_EQ(quota.byte_size(), png.size() + read_fixture("lossless.webp").size() + read_fixture("baseline.jpg").size());
  EXPECT_EQ(image_token_adjustment(*r),
            (*r)[0].num_tokens + (*r)[1].num_tokens + (*r)[2].num_tokens - 3);
}

TEST(ImageResolver, ResolvesImageRefsFromTheRequestParsers) {
  std::vector<ImageRef> refs(2);
  refs[0].kind = ImageRef::Kind::kBase64;
  refs[0].media_type = "image/png";
  refs[0].data = to_base64(read_fixture("rgba.png"));
  refs[1].kind = ImageRef::Kind::kDataUrl;
  refs[1].url = "data:image/gif;base64," + to_base64(read_fixture("anim.gif"));
  refs[1].detail = "low";
  ImageQuota quota;
  auto r = resolve_image_refs(ImageResolver(), refs, quota);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->images.size(), 2u);
  const ImageTokenSpec spec = ImageTokenSpec::v41();
  EXPECT_EQ(r->images[0].num_tokens, *spec.calc_token_len(31, 17));
  EXPECT_EQ(r->images[1].num_tokens, *spec.calc_token_len(20, 14));
  EXPECT_EQ(r->token_adjustment, r->images[0].num_tokens + r->images[1].num_tokens - 2);
  EXPECT_EQ(quota.image_count(), 2u);

  refs[1].url = "data:image/gif;base64,AAAA";  // decodes, but is no GIF
  ImageQuota q2;
  auto bad = resolve_image_refs(ImageResolver(), refs, q2);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message().rfind("images[1]: ", 0), 0u) << bad.status().message();
  EXPECT_EQ(q2.image_count(), 0u);
}

TEST(ImageResolver, TooManyImagesCountsWhatTheQuotaHolds) {
  ImageLimits limits;
  limits.max_images = 2;
  const ImageResolver resolver(limits);
  ImageQuota quota;
  ASSERT_TRUE(resolver.resolve(std::vector{bytes_source("rgb.png")}, quota).is_ok());
  auto r = resolver.resolve(std::vector{bytes_source("rgb.png"), bytes_source("rgb.png")}, quota);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimit);
  EXPECT_NE(r.status().message().find("3 images"), std::string::npos) << r.status().message();
  EXPECT_EQ(quota.image_count(), 1u);
}

TEST(ImageResolver, ByteLimitsNameTheImage) {
  const Bytes png = read_fixture("rgb.png");
  ImageLimits per_image;
  per_image.max_image_bytes = png.size() - 1;
  ImageQuota q1;
  auto one = ImageResolver(per_image).resolve(std::vector{bytes_source("rgb.png")}, q1);
  EXPECT_EQ(one.status().code(), StatusCode::kLimit);
  EXPECT_EQ(one.status().message().rfind("images[0]: ", 0), 0u) << one.status().message();

  ImageLimits total;
  total.max_total_bytes = png.size() * 3 / 2;
  total.max_concurrent_sources = 1;  // deterministic: the second image is the one refused
  ImageQuota q2;
  auto two = ImageResolver(total).resolve(
      std::vector{bytes_source("rgb.png"), bytes_source("rgb.png")}, q2);
  EXPECT_EQ(two.status().code(), StatusCode::kLimit);
  EXPECT_EQ(two.status().message().rfind("images[1]: ", 0), 0u) << two.status().message();
  EXPECT_EQ(q2.image_count(), 0u);
  EXPECT_EQ(q2.byte_size(), 0u);

  // A later call of the same request sees the bytes an earlier call used.
  ImageQuota q3;
  ASSERT_TRUE(ImageResolver(total).resolve(std::vector{bytes_source("rgb.png")}, q3).is_ok());
  auto later = ImageResolver(total).resolve(std::vector{bytes_source("rgb.png")}, q3);
  EXPECT_EQ(later.status().code(), StatusCode::kLimit);
}

TEST(ImageResolver, OversizedDataUrlIsRefusedBeforeItsBodyIsDecoded) {
  ImageLimits limits;
  limits.max_image_bytes = 1000;
  ImageSource src;
  src.kind = ImageSource::Kind::kDataUrl;
  src.url = "data:image/png;base64," + std::string(4000, '@');  // not even valid base64
  src.field = "input[0].content[1].image_url";
  ImageQuota quota;
  auto r = ImageResolver(limits).resolve(std::vector{src}, quota);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimit) << r.status().message();
  EXPECT_EQ(r.status().message().rfind("input[0].content[1].image_url: ", 0), 0u);
}

TEST(ImageResolver, FirstFailingSourceIsReportedAndQuotaIsUnchanged) {
  std::vector<ImageSource> sources{bytes_source("rgb.png"), bytes_source("unsupported.bmp"),
                                   bytes_source("truncated.png")};
  ImageLimits limits;
  limits.max_concurrent_sources = 1;
  ImageQuota quota;
  auto r = ImageResolver(limits).resolve(sources, quota);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(r.status().message().rfind("images[1]: ", 0), 0u) << r.status().message();
  EXPECT_EQ(quota.image_count(), 0u);
}

TEST(ImageResolver, DefaultPolicyRefusesLoopbackUrlSources) {
  LocalHttpServer server;
  serve_fixture(server, "/a.png", "rgb.png", "image/png");
  server.start();
  ImageQuota quota;
  auto src = *image_source_from_url(server.url("/a.png"), ImageDetail::kHigh, "messages[3].content[0].image_url");
  auto r = ImageResolver().resolve(std::vector{src}, quota);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermission);
  EXPECT_EQ(r.status().message().rfind("messages[3].content[0].image_url: ", 0), 0u);
  EXPECT_EQ(server.requests(), 0);
}

TEST(ImageResolver, FetchesAtMostMaxConcurrentSourcesAtATime) {
  LocalHttpServer server;
  serve_fixture(server, "/slow.png", "rgb.png", "image/png", 60);
  server.start();
  FetchOptions fetch;
  fetch.policy = DestinationPolicy::allow_all();
  ImageLimits limits;
  limits.max_concurrent_sources = 3;
  std::vector<ImageSource> sources(
      10, *image_source_from_url(server.url("/slow.png"), ImageDetail::kLow, ""));
  ImageQuota quota;
  auto r = ImageResolver(limits, fetch).resolve(sources, quota);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(server.requests(), 10);
  EXPECT_EQ(server.max_in_flight(), 3);
}

TEST(ImageResolver, CancelStopsTheCall) {
  LocalHttpServer server;
  server.serve("/slow.png", "x", "image/png", 4000);
  server.start();
  FetchOptions fetch;
  fetch.policy = DestinationPolicy::allow_all();
  std::vector<ImageSource> sources(
      20, *image_source_from_url(server.url("/slow.png"), ImageDetail::kHigh, ""));
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  });
  ImageQuota quota;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = ImageResolver(ImageLimits{}, fetch).resolve(sources, quota, &cancel);
  canceller.join();
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().message();
  // Well before the first response (4 s; all 20 would take 12 s at 8 in flight).
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
  EXPECT_LT(server.requests(), 20);
}

}  // namespace
}  // namespace di::recipe::image
