// libFuzzer target: the request-head parser and the chunked decoder on arbitrary bytes. Beyond
// "no crash, no leak" it checks that the parser is incremental (every prefix of a complete head
// is incomplete or the same refusal, never a different head) and that decoding respects its
// limit whatever the framing says.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/http/chunked_decoder.h"
#include "server/http/request_head.h"

using di::server::http::ChunkedDecoder;
using di::server::http::HeadLimits;
using di::server::http::HeadParse;
using di::server::http::RequestHead;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  HeadLimits limits;
  limits.max_head_bytes = 2048;
  limits.max_headers = 16;
  RequestHead head;
  const HeadParse full = parse_request_head(in, limits, &head);
  if (full.state == HeadParse::State::kComplete) {
    if (full.head_bytes > size) std::abort();
    // A prefix that ends before the blank line cannot be complete.
    RequestHead h2;
    if (parse_request_head(in.substr(0, full.head_bytes - 1), limits, &h2).state == HeadParse::State::kComplete)
      std::abort();
    if (head.headers.size() > limits.max_headers) std::abort();
    for (const auto& [name, value] : head.headers)
      for (unsigned char c : value)
        if ((c < 0x20 && c != '\t') || c == 0x7f) std::abort();
  }
  if (full.state == HeadParse::State::kError && (full.status < 400 || full.status > 505)) std::abort();
  // The same bytes as a chunked body, whole and split in two.
  const uint64_t max_body = 512;
  ChunkedDecoder whole(max_body);
  std::string body;
  size_t used = 0;
  const ChunkedDecoder::State s = whole.feed(in, &used, &body);
  if (used > size || body.size() > max_body) std::abort();
  if (s == ChunkedDecoder::State::kDone && size > 0) {
    ChunkedDecoder split(max_body);
    std::string b2;
    size_t u1 = 0, u2 = 0;
    const size_t cut = size / 2;
    ChunkedDecoder::State s1 = split.feed(in.substr(0, cut), &u1, &b2);
    if (s1 == ChunkedDecoder::State::kNeedMore) s1 = split.feed(in.substr(u1), &u2, &b2);
    if (s1 != ChunkedDecoder::State::kDone || b2 != body || u1 + u2 != used) std::abort();
  }
  return 0;
}
