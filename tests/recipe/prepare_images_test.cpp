// prepare() with the vision image policy: images are resolved (fetched, decoded, fitted) and
// their tokens — the DeepSeek V4.1 reference token vectors of tests/fixtures/recipe_image —
// count in prompt_tokens and the context budget; the operator's image options (remote fetch
// switch, destination policy, limits) apply, a loopback server started here is refused by
// default without being contacted and reachable once allowed.
#include <gtest/gtest.h>

#include <webp/encode.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "../recipe_image/local_http_server.h"
#include "recipe/prepare/prepare.h"
#include "recipe/tokenizer/tokenizer.h"
#include "tests/recipe/test_images.h"
#include "tests/recipe_stream/tiny_deepseek_tokenizer.h"

namespace di::recipe {
namespace {

using nlohmann::json;
using image::testing::LocalHttpServer;

// The reference token count and fitted size of a source size (v41_resize_vectors.tsv).
struct Vector {
  uint64_t tokens;
  uint32_t width, height;
};
Vector reference_vector(uint32_t w, uint32_t h) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/v41_resize_vectors.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    uint32_t sw, sh, bw, bh;
    uint64_t t;
    row >> sw >> sh >> t >> bw >> bh;
    if (sw == w && sh == h) return {t, bw, bh};
  }
  ADD_FAILURE() << "no reference vector for " << w << "x" << h;
  return {};
}

// A w×h lossless WebP (a gradient, so it is not trivially empty).
std::string webp_image(int w, int h) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 7);
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeLosslessRGB(rgb.data(), w, h, w * 3, &out);
  std::string s(reinterpret_cast<char*>(out), n);
  WebPFree(out);
  return s;
}

std::string data_url(int w, int h) {
  return "data:image/webp;base64," + di::testing::base64(webp_image(w, h));
}

std::string chat_body(const std::vector<std::string>& urls, const std::string& extra = "") {
  json content = json::array({{{"type", "text"}, {"text", "What is in these?"}}});
  for (const auto& u : urls) content.push_back({{"type", "image_url"}, {"image_url", {{"url", u}}}});
  json body = {{"model", "deepseek-v4"}, {"messages", json::array({{{"role", "user"}, {"content", content}}})}};
  if (!extra.empty()) body.update(json::parse(extra));
  return body.dump();
}

class PrepareImages : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/di_prep_img_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    auto tok = Tokenizer::load(di::testing::write_tiny_deepseek_tokenizer(tmpl));
    ASSERT_TRUE(tok.is_ok()) << tok.status().message();
    std::shared_ptr<const Tokenizer> t = *tok;
    tokenizer_ = [t](const RenderedPrompt& prompt) -> Result<TokenizedPrompt> {
      std::vector<Segment> segs;
      for (const auto& s : prompt.segments) segs.push_back({s.text, s.special});
      DI_ASSIGN_OR_RETURN(SegmentedIds enc, t->encode_segments(segs));
      TokenizedPrompt out;
      out.ids = std::move(enc.ids);
      return out;
    };
    config_.encoding = Encoding::kDsv41;
    config_.image_policy = ImagePolicy::kVision;
    config_.image_options.fetch.total_timeout_ms = 5000;
  }

  Result<Prepared> run(const std::string& body) {
    return prepare(config_, tokenizer_, Protocol::kChatCompletions, body);
  }

  RecipeConfig config_;
  PromptTokenizer tokenizer_;
};

TEST_F(PrepareImages, ImageTokensFollowTheReferenceVectorsAndCountInPromptTokens) {
  auto p = run(chat_body({data_url(640, 480), data_url(1, 1)}));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_EQ(p->image_data.size(), 2u);
  const Vector a = reference_vector(640, 480), b = reference_vector(1, 1);
  EXPECT_EQ(p->image_data[0].num_tokens, a.tokens);
  EXPECT_EQ(p->image_data[0].width, a.width);
  EXPECT_EQ(p->image_data[0].height, a.height);
  EXPECT_EQ(p->image_data[1].num_tokens, b.tokens);
  EXPECT_EQ(std::string(p->image_data[0].webp.begin() + 8, p->image_data[0].webp.begin() + 12), "WEBP");
  // The V4.1 prompt's image placeholder (one token each).
  const int32_t image_id = di::testing::tiny_token_id("<｜deepseek_image｜>");
  EXPECT_EQ(std::count(p->ids.begin(), p->ids.end(), image_id), 2);
  EXPECT_EQ(p->image_tokens, static_cast<int64_t>(a.tokens - 1 + b.tokens - 1));
  EXPECT_EQ(p->prompt_tokens, static_cast<int64_t>(p->ids.size()) + p->image_tokens);
}

TEST_F(PrepareImages, ContextBudgetIncludesTheImageTokens) {
  auto p = run(chat_body({data_url(640, 480)}));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  const int64_t text_ids = static_cast<int64_t>(p->ids.size());
  // Room for the text but not for the image: rejected.
  config_.context_length = text_ids + 100;
  auto over = run(chat_body({data_url(640, 480)}));
  ASSERT_FALSE(over.is_ok());
  EXPECT_EQ(api_error_from_status(Protocol::kChatCompletions, over.status()).code,
            "context_length_exceeded");
  // Room for both and 10 more: max_tokens fills exactly that.
  config_.context_length = p->prompt_tokens + 10;
  auto fits = run(chat_body({data_url(640, 480)}));
  ASSERT_TRUE(fits.is_ok()) << fits.status().message();
  EXPECT_EQ(fits->engine.sampling.max_tokens, 10);
}

TEST_F(PrepareImages, LimitsFromTheOptionsAreEnforced) {
  config_.image_options.limits.max_images = 1;
  auto p = run(chat_body({data_url(2, 2), data_url(2, 2)}));
  ASSERT_FALSE(p.is_ok());
  const ApiError e = api_error_from_status(Protocol::kChatCompletions, p.status());
  EXPECT_EQ(e.http_status, 400);
  EXPECT_NE(e.message.find("images"), std::string::npos) << e.message;
  config_.image_options.limits.max_images = 600;
  config_.image_options.limits.max_image_bytes = 16;
  p = run(chat_body({data_url(64, 64)}));
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(api_error_from_status(Protocol::kChatCompletions, p.status()).http_status, 400);
}

void serve_webp(LocalHttpServer& s, const std::string& path, int w, int h) {
  const std::string img = webp_image(w, h);
  s.routes().Get(path, s.counted([img](const httplib::Request&, httplib::Response& res) {
    res.set_content(img, "image/webp");
  }));
}

TEST_F(PrepareImages, LoopbackServerIsRefusedByDefaultAndReachableWhenAllowed) {
  LocalHttpServer server;
  serve_webp(server, "/a.webp", 640, 480);
  server.routes().Get("/down", server.counted([](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
  }));
  server.start();
  const std::string url = server.url("/a.webp");

  auto refused = run(chat_body({url}));
  ASSERT_FALSE(refused.is_ok());
  const ApiError e = api_error_from_status(Protocol::kChatCompletions, refused.status());
  EXPECT_EQ(e.http_status, 400);
  EXPECT_NE(e.message.find("images[0]"), std::string::npos) << e.message;
  EXPECT_EQ(server.requests(), 0);  // refused before any byte was sent

  config_.image_options.fetch.policy.allow(*image::parse_destination_rule("127.0.0.1"));
  auto ok = run(chat_body({url}));
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->image_data.at(0).num_tokens, reference_vector(640, 480).tokens);
  EXPECT_EQ(server.requests(), 1);

  // A server-side failure is retryable: 500, not the client's 400.
  auto down = run(chat_body({server.url("/down")}));
  ASSERT_FALSE(down.is_ok());
  EXPECT_EQ(api_error_from_status(Protocol::kChatCompletions, down.status()).http_status, 500);

  // Remote fetch switched off: URLs are refused up front, data URLs still work.
  config_.image_options.allow_remote = false;
  const int before = server.requests();
  auto off = run(chat_body({url}));
  ASSERT_FALSE(off.is_ok());
  EXPECT_NE(off.status().message().find("data URL"), std::string::npos) << off.status().message();
  EXPECT_EQ(server.requests(), before);
  EXPECT_TRUE(run(chat_body({data_url(3, 3)})).is_ok());
}

TEST_F(PrepareImages, NonVisionPoliciesNeverResolve) {
  config_.image_policy = ImagePolicy::kUnsupported;
  auto p = run(chat_body({"http://127.0.0.1:1/never-fetched.png"}));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_TRUE(p->image_data.empty());
  EXPECT_EQ(p->image_tokens, 0);
  EXPECT_NE(p->prompt.find("[Unsupported Image]"), std::string::npos);
}

}  // namespace
}  // namespace di::recipe
