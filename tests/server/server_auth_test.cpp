// API-key extraction and comparison: both header styles the SDKs send, and rejection of
// everything else.
#include <gtest/gtest.h>

#include <string>

#include "server/auth.h"

namespace di::server {
namespace {

TEST(ConstantTimeEquals, EqualOnlyForSameBytesAndLength) {
  EXPECT_TRUE(constant_time_equals("", ""));
  EXPECT_TRUE(constant_time_equals("sk-abc", "sk-abc"));
  EXPECT_FALSE(constant_time_equals("sk-abc", "sk-abd"));
  EXPECT_FALSE(constant_time_equals("sk-abc", "sk-ab"));
  EXPECT_FALSE(constant_time_equals("sk-ab", "sk-abc"));
  EXPECT_FALSE(constant_time_equals("", "x"));
  // A prefix padded with NUL must not pass as the shorter key.
  EXPECT_FALSE(constant_time_equals(std::string("ab\0", 3), "ab"));
}

TEST(PresentedApiKey, ReadsBearerTokenOrXApiKey) {
  EXPECT_EQ(presented_api_key("Bearer sk-1", ""), "sk-1");
  EXPECT_EQ(presented_api_key("bearer   sk-1  ", ""), "sk-1");
  EXPECT_EQ(presented_api_key("BEARER sk-1", "other"), "sk-1");
  EXPECT_EQ(presented_api_key("", "sk-2"), "sk-2");
  EXPECT_EQ(presented_api_key("Basic dXNlcjpwYXNz", "sk-2"), "sk-2");  // not a bearer token
  EXPECT_EQ(presented_api_key("Bearer", ""), "");
  EXPECT_EQ(presented_api_key("Bearer ", ""), "");
  EXPECT_EQ(presented_api_key("Bearersk-1", ""), "");
}

TEST(ApiKeyAuth, AllowsAnyConfiguredKeyInEitherHeader) {
  ApiKeyAuth auth({"sk-one", "sk-two"});
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.allows("Bearer sk-one", ""));
  EXPECT_TRUE(auth.allows("", "sk-two"));
  EXPECT_FALSE(auth.allows("", ""));
  EXPECT_FALSE(auth.allows("Bearer sk-three", ""));
  EXPECT_FALSE(auth.allows("Bearer sk-on", ""));
  EXPECT_FALSE(auth.allows("sk-one", ""));  // no scheme: not a bearer token
  // A wrong Bearer token is not rescued by a right x-api-key: the Authorization header wins.
  EXPECT_FALSE(auth.allows("Bearer wrong", "sk-one"));
}

TEST(ApiKeyAuth, WithoutKeysEveryRequestPasses) {
  ApiKeyAuth auth({});
  EXPECT_FALSE(auth.enabled());
  EXPECT_TRUE(auth.allows("", ""));
  EXPECT_TRUE(auth.allows("Bearer anything", ""));
}

}  // namespace
}  // namespace di::server
