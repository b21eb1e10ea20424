// Server configuration limits and the error bodies the server raises itself: out-of-range
// values are refused with a message naming the flag; defaults are filled; each API gets its own
// error envelope and type for the statuses the SDKs map to typed errors.
#include <gtest/gtest.h>

#include "server/error_response.h"
#include "server/server_config.h"

namespace di::server {
namespace {

TEST(ServerConfig, DefaultsBindLoopbackAndNameTheModelAfterItsFolder) {
  ServerConfig c;
  c.model_dir = "models/tiny-v4/";
  ASSERT_TRUE(c.validate().is_ok());
  EXPECT_EQ(c.host, "127.0.0.1");
  ASSERT_EQ(c.served_model_names.size(), 1u);
  EXPECT_EQ(c.served_model_names[0], "tiny-v4");
}

TEST(ServerConfig, RefusesOutOfRangeLimitsNamingTheFlag) {
  auto refused = [](auto mutate, const char* flag) {
    ServerConfig c;
    c.model_dir = "m";
    mutate(c);
    const Status st = c.validate();
    EXPECT_FALSE(st.is_ok()) << flag;
    EXPECT_NE(st.message().find(flag), std::string::npos) << st.message();
  };
  refused([](ServerConfig& c) { c.model_dir.clear(); }, "--model");
  refused([](ServerConfig& c) { c.port = 70000; }, "--port");
  refused([](ServerConfig& c) { c.api_keys = {""}; }, "--api-key");
  refused([](ServerConfig& c) { c.served_model_names = {"a", ""}; }, "--served-model-name");
  refused([](ServerConfig& c) { c.limits.max_body_bytes = 10; }, "--max-body-bytes");
  refused([](ServerConfig& c) { c.limits.read_timeout_s = 0; }, "--read-timeout");
  refused([](ServerConfig& c) { c.limits.request_timeout_s = 0; }, "--request-timeout");
  refused([](ServerConfig& c) { c.limits.max_connections = 1; }, "--max-connections");
  refused([](ServerConfig& c) { c.image_policy = "sometimes"; }, "--image-policy");
  // Fetch options without fetching would be silently ignored: refused instead.
  refused([](ServerConfig& c) { c.image_allow_destinations = {"10.0.0.0/8"}; }, "--image-allow-destination");
  refused([](ServerConfig& c) { c.image_allow_remote = false; }, "--no-remote-images");
}

TEST(ServerError, EachApiGetsItsOwnEnvelopeAndType) {
  const auto openai = server_error(Protocol::kChatCompletions, 401, "bad key", "invalid_api_key").body();
  EXPECT_EQ(openai["error"]["type"], "authentication_error");
  EXPECT_EQ(openai["error"]["code"], "invalid_api_key");
  EXPECT_EQ(openai["error"]["message"], "bad key");
  const auto anthropic = server_error(Protocol::kMessages, 401, "bad key").body();
  EXPECT_EQ(anthropic["type"], "error");
  EXPECT_EQ(anthropic["error"]["type"], "authentication_error");
  EXPECT_EQ(server_error(Protocol::kMessages, 413, "big").body()["error"]["type"], "request_too_large");
  EXPECT_EQ(server_error(Protocol::kMessages, 404, "no").body()["error"]["type"], "not_found_error");
  EXPECT_EQ(server_error(Protocol::kResponses, 500, "x").http_status, 500);
}

TEST(ProtocolFor, AnthropicByPathOrVersionHeader) {
  EXPECT_EQ(protocol_for("/v1/messages", false), Protocol::kMessages);
  EXPECT_EQ(protocol_for("/v1/models", true), Protocol::kMessages);
  EXPECT_EQ(protocol_for("/v1/models", false), Protocol::kChatCompletions);
  EXPECT_EQ(protocol_for("/v1/responses", false), Protocol::kResponses);
}

}  // namespace
}  // namespace di::server
