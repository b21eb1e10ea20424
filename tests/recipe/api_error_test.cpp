// ApiError bodies: the wire shapes of OpenAI's error object and Anthropic's error envelope.
#include "recipe/protocol/api_error.h"

#include <gtest/gtest.h>

namespace di::recipe {
namespace {

using json = nlohmann::json;

TEST(ApiError, OpenAiBodyHasMessageTypeParamAndCode) {
  ApiError e = ApiError::bad_request(Protocol::kChatCompletions, "temperature",
                                     "temperature: expected a number in [0, 2], got 3");
  json b = e.body();
  ASSERT_TRUE(b["error"].is_object());
  EXPECT_EQ(b["error"]["type"], "invalid_request_error");
  EXPECT_EQ(b["error"]["param"], "temperature");
  EXPECT_TRUE(b["error"]["code"].is_null());
  EXPECT_EQ(b["error"]["message"], "temperature: expected a number in [0, 2], got 3");
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b["error"].size(), 4u);
}

TEST(ApiError, AnthropicBodyIsTypedErrorEnvelope) {
  ApiError e = ApiError::model_not_found(Protocol::kMessages, "claude-x");
  json b = e.body();
  EXPECT_EQ(b["type"], "error");
  EXPECT_EQ(b["error"]["type"], "not_found_error");
  EXPECT_EQ(e.http_status, 404);
  EXPECT_FALSE(b["error"].contains("code"));
}

TEST(ApiError, ModelNotFoundIs404WithCodeForOpenAi) {
  ApiError e = ApiError::model_not_found(Protocol::kResponses, "gpt-x");
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.body()["error"]["code"], "model_not_found");
  EXPECT_EQ(e.to_status().code(), StatusCode::kNotFound);
}

TEST(ApiError, StatusRoundTripKeepsStatusAndBody) {
  ApiError e = ApiError::context_length_exceeded(Protocol::kChatCompletions, "too long");
  Status s = e.to_status();
  EXPECT_EQ(s.code(), StatusCode::kLimit);
  json d = json::parse(s.detail());
  EXPECT_EQ(d["status"], 400);
  EXPECT_EQ(d["body"], e.body());
  ApiError back = api_error_from_status(Protocol::kChatCompletions, s);
  EXPECT_EQ(back.body(), e.body());
  EXPECT_EQ(back.http_status, 400);
}

TEST(ApiError, PlainStatusBecomesClientOrServerError) {
  ApiError bad = api_error_from_status(Protocol::kMessages, Status::invalid_argument("x: bad"));
  EXPECT_EQ(bad.http_status, 400);
  EXPECT_EQ(bad.body()["error"]["type"], "invalid_request_error");
  ApiError io = api_error_from_status(Protocol::kChatCompletions, Status::io("disk"));
  EXPECT_EQ(io.http_status, 500);
  EXPECT_EQ(io.body()["error"]["type"], "internal_error");
}

TEST(ApiError, ProtocolNamesRoundTrip) {
  for (Protocol p : {Protocol::kChatCompletions, Protocol::kResponses, Protocol::kMessages}) {
    auto r = parse_protocol(protocol_name(p));
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(*r, p);
  }
  EXPECT_FALSE(parse_protocol("grpc").is_ok());
}

}  // namespace
}  // namespace di::recipe
