// The request-head parser and the chunked decoder against RFC 9112's grammar, with the lax forms
// a hostile client sent (issue 25, rows 4 and 10) refused with the status HTTP gives them.
#include <gtest/gtest.h>

#include <string>

#include "server/http/chunked_decoder.h"
#include "server/http/request_head.h"

namespace di::server::http {
namespace {

struct HeadCase {
  const char* name;
  std::string head;
  int status;  // 0: parses
};

HeadParse parse(const std::string& text, RequestHead* head, HeadLimits limits = {}) {
  return parse_request_head(text, limits, head);
}

std::string post(const std::string& fields) { return "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n" + fields + "\r\n"; }

class HeadRules : public ::testing::TestWithParam<HeadCase> {};

TEST_P(HeadRules, ParseOrRefuseWithTheRightStatus) {
  const HeadCase& c = GetParam();
  RequestHead head;
  const HeadParse p = parse(c.head, &head);
  if (c.status == 0) {
    EXPECT_EQ(p.state, HeadParse::State::kComplete) << p.message;
  } else {
    ASSERT_EQ(p.state, HeadParse::State::kError);
    EXPECT_EQ(p.status, c.status) << p.message;
    EXPECT_FALSE(p.message.empty());
  }
}

const HeadCase kHeads[] = {
    {"PlainGet", "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n", 0},
    {"ContentLength", post("Content-Length: 5\r\n"), 0},
    {"SameContentLengthTwice", post("Content-Length: 5\r\nContent-Length: 5\r\n"), 0},
    {"Chunked", post("Transfer-Encoding: chunked\r\n"), 0},
    {"ChunkedAnyCase", post("Transfer-Encoding: Chunked\r\n"), 0},
    {"TwoDifferentContentLengths", post("Content-Length: 5\r\nContent-Length: 6\r\n"), 400},
    {"ContentLengthList", post("Content-Length: 5, 6\r\n"), 400},
    {"ContentLengthWithPlus", post("Content-Length: +5\r\n"), 400},
    {"ContentLengthNegative", post("Content-Length: -1\r\n"), 400},
    {"ContentLengthPastTwoToTheSixtyFour", post("Content-Length: 18446744073709551621\r\n"), 400},
    {"ContentLengthHex", post("Content-Length: 0x10\r\n"), 400},
    {"ContentLengthAndChunked", post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), 400},
    {"IdentityThenChunked", post("Transfer-Encoding: identity, chunked\r\n"), 501},
    {"GzipThenChunked", post("Transfer-Encoding: gzip, chunked\r\n"), 501},
    {"ChunkedNotLast", post("Transfer-Encoding: chunked, gzip\r\n"), 400},
    {"TransferEncodingTwice", post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"), 400},
    {"ChunkedOnHttp10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
    {"NulInAHeaderValue", post(std::string("Authorization: Bearer sk-test\0zz\r\n", 34)), 400},
    {"ControlByteInAHeaderValue", post("X-A: a\x01" "b\r\n"), 400},
    {"DelInAHeaderValue", post("X-A: a\x7f\r\n"), 400},
    {"BareLfInsideTheHead", "GET / HTTP/1.1\r\nHost: localhost\nX-A: b\r\n\r\n", 400},
    {"ObsFold", post("X-A: a\r\n  folded\r\n"), 400},
    {"SpaceBeforeColon", post("Content-Length : 5\r\n"), 400},
    {"NoColon", post("Content-Length 5\r\n"), 400},
    {"MissingHost", "GET / HTTP/1.1\r\n\r\n", 400},
    {"TwoHosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
    {"Http2Preface", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
    {"GarbageVersion", "GET / HTTQ/1.1\r\nHost: a\r\n\r\n", 400},
    {"AbsoluteFormTarget", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"DoubleSpaceInRequestLine", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"NulInTarget", std::string("GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n", 28), 400},
};

INSTANTIATE_TEST_SUITE_P(Rfc9112, HeadRules, ::testing::ValuesIn(kHeads),
                         [](const ::testing::TestParamInfo<HeadCase>& i) { return std::string(i.param.name); });

TEST(RequestHead, FramingAndKeepAliveFollowTheHeaders) {
  RequestHead h;
  ASSERT_EQ(parse(post("Content-Length: 12\r\nConnection: close\r\n"), &h).state, HeadParse::State::kComplete);
  EXPECT_EQ(h.framing, BodyFraming::kLength);
  EXPECT_EQ(h.content_length, 12u);
  EXPECT_FALSE(h.keep_alive);
  ASSERT_EQ(parse("GET /x?y=1 HTTP/1.0\r\n\r\n", &h).state, HeadParse::State::kComplete);
  EXPECT_EQ(h.path, "/x");
  EXPECT_FALSE(h.keep_alive);  // HTTP/1.0 without keep-alive
  EXPECT_EQ(h.framing, BodyFraming::kNone);
}

TEST(RequestHead, TooManyHeaderFieldsAre431BeforeTheHeadEnds) {
  std::string h = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 200; ++i) h += "X-" + std::to_string(i) + ": v\r\n";  // no blank line yet
  RequestHead head;
  const HeadParse p = parse(h, &head);
  ASSERT_EQ(p.state, HeadParse::State::kError);
  EXPECT_EQ(p.status, 431);
}

TEST(RequestHead, AHeadOverTheByteLimitIs431BeforeItEnds) {
  std::string h = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + std::string(70000, 'a');
  RequestHead head;
  const HeadParse p = parse(h, &head);
  ASSERT_EQ(p.state, HeadParse::State::kError);
  EXPECT_EQ(p.status, 431);
}

TEST(RequestHead, AnUnfinishedHeadWithinTheLimitsWaitsForMore) {
  RequestHead head;
  EXPECT_EQ(parse("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Type: appl", &head).state,
            HeadParse::State::kIncomplete);
}

ChunkedDecoder::State decode(const std::string& in, std::string* body, size_t* used, uint64_t limit = 1 << 20) {
  ChunkedDecoder d(limit);
  return d.feed(in, used, body);
}

TEST(ChunkedDecoder, DecodesChunksExtensionsAndTrailers) {
  std::string body;
  size_t used = 0;
  const std::string in = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nNEXT";
  ASSERT_EQ(decode(in, &body, &used), ChunkedDecoder::State::kDone);
  EXPECT_EQ(body, "hello world");
  EXPECT_EQ(in.substr(used), "NEXT");  // a pipelined request's first bytes stay unread
}

TEST(ChunkedDecoder, DecodesTheSameBodyFedOneByteAtATime) {
  const std::string in = "5\r\nhello\r\n0\r\n\r\n";
  ChunkedDecoder d(1024);
  std::string body;
  ChunkedDecoder::State s = ChunkedDecoder::State::kNeedMore;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t used = 0;
    s = d.feed(std::string_view(in).substr(i, 1), &used, &body);
    ASSERT_EQ(used, 1u);
  }
  EXPECT_EQ(s, ChunkedDecoder::State::kDone);
  EXPECT_EQ(body, "hello");
}

TEST(ChunkedDecoder, AChunkSizeOverTheLimitIsRefusedBeforeItsDataArrives) {
  std::string body;
  size_t used = 0;
  EXPECT_EQ(decode("100001\r\n", &body, &used, 1 << 20), ChunkedDecoder::State::kTooLarge);
  EXPECT_TRUE(body.empty());
  // Many small chunks add up past the limit too.
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "400\r\n" + std::string(1024, 'x') + "\r\n";
  EXPECT_EQ(decode(many, &body, &used, 1 << 20), ChunkedDecoder::State::kTooLarge);
  EXPECT_LE(body.size(), 1u << 20);
}

TEST(ChunkedDecoder, MalformedFramingIsRefused) {
  std::string body;
  size_t used = 0;
  EXPECT_EQ(decode("zz\r\n", &body, &used), ChunkedDecoder::State::kMalformed);
  EXPECT_EQ(decode("5\r\nhelloXX", &body, &used), ChunkedDecoder::State::kMalformed);
  EXPECT_EQ(decode("5\nhello\r\n", &body, &used), ChunkedDecoder::State::kMalformed);
  EXPECT_EQ(decode("ffffffffffffffffff\r\n", &body, &used), ChunkedDecoder::State::kTooLarge);
  EXPECT_EQ(decode(std::string(5000, '1'), &body, &used), ChunkedDecoder::State::kMalformed);  // line cap
}

}  // namespace
}  // namespace di::server::http
