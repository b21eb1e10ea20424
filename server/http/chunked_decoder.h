// ChunkedDecoder: the chunked transfer coding (RFC 9112 §7.1) decoded incrementally, refusing
// a body whose decoded size passes a limit as soon as a chunk size announces it. Knows nothing
// of sockets: it is fed bytes and appends the payload to a string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace di::server::http {

class ChunkedDecoder {
 public:
  enum class State { kNeedMore, kDone, kTooLarge, kMalformed };

  explicit ChunkedDecoder(uint64_t max_body_bytes) : max_body_(max_body_bytes) {}

  // Consumes a prefix of `in` (the bytes it used: *consumed), appending payload to *body. kDone:
  // the last chunk and trailer section ended; bytes after *consumed belong to the next request.
  State feed(std::string_view in, size_t* consumed, std::string* body);
  const std::string& error() const { return error_; }

 private:
  enum class Step { kSize, kData, kDataEnd, kTrailer };
  State fail(State s, std::string m) {
    error_ = std::move(m);
    return s;
  }

  uint64_t max_body_;
  uint64_t decoded_ = 0;
  uint64_t remaining_ = 0;  // of the current chunk
  Step step_ = Step::kSize;
  std::string line_;        // a size or trailer line being assembled
  size_t trailer_bytes_ = 0;
  std::string error_;
};

}  // namespace di::server::http
