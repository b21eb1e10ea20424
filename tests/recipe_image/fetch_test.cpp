// fetch_image against HTTP servers this test starts on loopback addresses: the default policy
// must refuse them (directly, by name, and via a redirect from an allowed server) without the
// refused server ever seeing a request; an allowing policy must reach them; size caps, timeouts
// and bad redirects must end in clear errors.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include "local_http_server.h"
#include "recipe/image/image_fetcher.h"

namespace di::recipe::image {
namespace {

using testing::LocalHttpServer;

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(DI_FIXTURES_DIR) + "/recipe_image/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// fetch_image with a fresh budget far above any image here, for the checks that are not about
// the budget.
Result<Bytes> fetch(std::string_view url, const FetchOptions& options, std::string_view field = "f",
                    const CancelFn& cancel = {}) {
  ImageByteBudget budget(size_t{32} << 20, size_t{64} << 20, 0);
  return fetch_image(url, options, budget, field, cancel);
}

void serve_png(LocalHttpServer& s, const std::string& path = "/img.png") {
  s.serve(path, read_fixture("rgb.png"), "image/png");
}

void serve_redirect(LocalHttpServer& s, const std::string& path, const std::string& to) {
  s.routes().Get(path, s.counted([to](const httplib::Request&, httplib::Response& res) {
    res.set_redirect(to, 302);
  }));
}

// Answers after 4 s: far longer than any timeout or cancel here, so a test's bound tells them
// from a slow success with room for a loaded machine.
void serve_slow(LocalHttpServer& s, const std::string& path) { s.serve(path, "late", "image/png", 4000); }

FetchOptions allowing_all() {
  FetchOptions o;
  o.policy = DestinationPolicy::allow_all();
  return o;
}

FetchOptions allowing(const std::vector<std::string>& rules) {
  FetchOptions o;
  for (const auto& r : rules) o.policy.allow(*parse_destination_rule(r));
  o.total_timeout_ms = 5000;
  return o;
}

TEST(ImageFetch, DefaultPolicyRefusesLoopbackServerWithoutContactingIt) {
  LocalHttpServer server;
  serve_png(server);
  server.start();
  auto r = fetch(server.url("/img.png"), FetchOptions{}, "messages[0].content[1]");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermission) << r.status().message();
  EXPECT_EQ(r.status().message().rfind("messages[0].content[1]: ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("loopback"), std::string::npos) << r.status().message();
  EXPECT_EQ(server.requests(), 0);
}

TEST(ImageFetch, DefaultPolicyChecksTheAddressAHostnameResolvesTo) {
  LocalHttpServer server;
  serve_png(server);
  server.start();
  const std::string url = "http://localhost:" + std::to_string(server.port()) + "/img.png";
  auto r = fetch(url, FetchOptions{});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermission) << r.status().message();
  EXPECT_EQ(server.requests(), 0);
}

TEST(ImageFetch, AllowingPolicyReachesTheSameServer) {
  LocalHttpServer server;
  serve_png(server);
  server.start();
  FetchOptions open = allowing_all();
  auto r = fetch(server.url("/img.png"), open);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(std::string(r->begin(), r->end()), read_fixture("rgb.png"));
  EXPECT_EQ(server.requests(), 1);

  // An allow rule for exactly this address and port works as well.
  auto r2 = fetch(server.url("/img.png"), allowing({"127.0.0.1:" + std::to_string(server.port())}));
  ASSERT_TRUE(r2.is_ok()) << r2.status().message();
}

// The allowed server redirects to a second loopback server the policy does not allow: the hop
// must be refused and the second server never contacted. A redirect that stays on the allowed
// server proves that redirects themselves are followed.
TEST(ImageFetch, RedirectFromAllowedServerToDeniedServerIsRefused) {
  LocalHttpServer denied;
  serve_png(denied);
  denied.start();
  LocalHttpServer allowed;
  serve_png(allowed);
  serve_redirect(allowed, "/to-denied", denied.url("/img.png"));
  serve_redirect(allowed, "/to-denied-by-name",
                 "http://localhost:" + std::to_string(denied.port()) + "/img.png");
  serve_redirect(allowed, "/to-self", "/img.png");  // relative: resolved against the allowed server
  allowed.start();
  const FetchOptions options = allowing({"127.0.0.1:" + std::to_string(allowed.port())});

  auto ok = fetch(allowed.url("/to-self"), options);
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(std::string(ok->begin(), ok->end()), read_fixture("rgb.png"));

  for (const char* path : {"/to-denied", "/to-denied-by-name"}) {
    auto r = fetch(allowed.url(path), options, "input[3].image_url");
    ASSERT_FALSE(r.is_ok()) << path;
    EXPECT_EQ(r.status().code(), StatusCode::kPermission) << r.status().message();
    EXPECT_NE(r.status().message().find(std::to_string(denied.port())), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(denied.requests(), 0);
  EXPECT_EQ(allowed.requests(), 4);  // /to-self, /img.png, and the two refused redirects

  // Allowing the target as well lets the same redirect through.
  auto through = fetch(allowed.url("/to-denied"), allowing({"127.0.0.1:" + std::to_string(allowed.port()),
                                                           "127.0.0.1:" + std::to_string(denied.port())}));
  ASSERT_TRUE(through.is_ok()) << through.status().message();
  EXPECT_EQ(denied.requests(), 1);
}

// Same with the two servers on different loopback addresses (the policy allows 127.0.0.2).
TEST(ImageFetch, RedirectFromAllowedAddressToAnotherLoopbackAddressIsRefused) {
  LocalHttpServer denied("127.0.0.1");
  serve_png(denied);
  denied.start();
  LocalHttpServer allowed("127.0.0.2");
  serve_png(allowed);
  serve_redirect(allowed, "/to-denied", denied.url("/img.png"));
  allowed.start();
  if (allowed.port() <= 0) GTEST_SKIP() << "127.0.0.2 cannot be bound here";
  const FetchOptions options = allowing({"127.0.0.2"});

  ASSERT_TRUE(fetch(allowed.url("/img.png"), options).is_ok());
  auto r = fetch(allowed.url("/to-denied"), options);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermission) << r.status().message();
  EXPECT_EQ(denied.requests(), 0);
}

TEST(ImageFetch, BodyOverTheImageLimitIsCutOffWhileStreaming) {
  LocalHttpServer server;
  const std::string body(300 * 1024, 'x');
  server.routes().Get("/sized", server.counted([&](const httplib::Request&, httplib::Response& res) {
    res.set_content(body, "image/png");
  }));
  server.routes().Get("/chunked", server.counted([&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("image/png", [&](size_t offset, httplib::DataSink& sink) {
      if (offset >= body.size()) {
        sink.done();
        return true;
      }
      sink.write(body.data() + offset, std::min<size_t>(16 * 1024, body.size() - offset));
      return true;
    });
  }));
  server.start();
  FetchOptions open = allowing_all();
  for (const char* path : {"/sized", "/chunked"}) {
    ImageByteBudget budget(100 * 1024, 1 << 20, 0);
    auto r = fetch_image(server.url(path), open, budget, "f");
    ASSERT_FALSE(r.is_ok()) << path;
    EXPECT_EQ(r.status().code(), StatusCode::kLimit) << path << ": " << r.status().message();
    // Nothing stays reserved after a failed fetch.
    EXPECT_TRUE(budget.reserve(1 << 20, "f").is_ok()) << path;
  }
}

TEST(ImageFetch, ConcurrentFetchesShareTheRequestTotal) {
  LocalHttpServer server;
  server.serve("/a", std::string(100 * 1024, 'x'), "image/png");
  server.start();
  FetchOptions open = allowing_all();
  ImageByteBudget budget(200 * 1024, 150 * 1024, 0);
  auto first = fetch_image(server.url("/a"), open, budget, "images[0]");
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  auto second = fetch_image(server.url("/a"), open, budget, "images[1]");
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kLimit);
  EXPECT_EQ(second.status().message().rfind("images[1]: ", 0), 0u) << second.status().message();
}

TEST(ImageFetch, SlowServerTimesOut) {
  LocalHttpServer server;
  serve_slow(server, "/slow");
  server.start();
  FetchOptions o = allowing_all();
  o.total_timeout_ms = 200;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = fetch(server.url("/slow"), o);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIo);
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos) << r.status().message();
  EXPECT_LT(ms, 3000);
}

TEST(ImageFetch, HttpErrorsRedirectLoopsAndNonHttpTargetsAreClearErrors) {
  LocalHttpServer server;
  server.routes().Get("/missing", server.counted([](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content("not here", "text/plain");
  }));
  server.routes().Get("/unavailable", server.counted([](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
  }));
  serve_redirect(server, "/loop", "/loop");
  serve_redirect(server, "/to-file", "file:///etc/passwd");
  server.routes().Get("/empty", server.counted([](const httplib::Request&, httplib::Response& res) {
    res.set_content("", "image/png");
  }));
  server.start();
  FetchOptions o = allowing_all();
  o.max_redirects = 3;

  auto missing = fetch(server.url("/missing"), o);
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("HTTP 404"), std::string::npos);

  auto loop = fetch(server.url("/loop"), o);
  EXPECT_EQ(loop.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loop.status().message().find("redirects"), std::string::npos);

  auto file = fetch(server.url("/to-file"), o);
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument) << file.status().message();

  auto unavailable = fetch(server.url("/unavailable"), o);
  EXPECT_EQ(unavailable.status().code(), StatusCode::kIo);
  EXPECT_NE(unavailable.status().message().find("HTTP 503"), std::string::npos);

  auto empty = fetch(server.url("/empty"), o);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);

  auto ftp = fetch("ftp://127.0.0.1/x.png", o);
  EXPECT_EQ(ftp.status().code(), StatusCode::kInvalidArgument);
}

TEST(ImageFetch, CancelAbortsTheTransfer) {
  LocalHttpServer server;
  serve_slow(server, "/slow");
  server.start();
  FetchOptions o = allowing_all();
  const auto t0 = std::chrono::steady_clock::now();
  auto r = fetch(server.url("/slow"), o, "f", [&] {
    return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(100);
  });
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().message();
  // Well before the server answers: the cancel, not the response, ended the fetch.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
}

}  // namespace
}  // namespace di::recipe::image
