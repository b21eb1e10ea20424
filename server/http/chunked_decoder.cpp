// chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF; last-chunk = 1*"0" [ chunk-ext ] CRLF;
// then trailer fields and a CRLF. Lines are bounded (a size line of megabytes is no size), and
// trailers are read and dropped (nothing here needs them).
#include "server/http/chunked_decoder.h"

#include "base/hex.h"

namespace di::server::http {
namespace {

constexpr size_t kMaxLine = 4096;         // a chunk-size line with its extensions
constexpr size_t kMaxTrailerBytes = 16384;

}  // namespace

ChunkedDecoder::State ChunkedDecoder::feed(std::string_view in, size_t* consumed, std::string* body) {
  size_t i = 0;
  auto done = [&](State s) {
    *consumed = i;
    return s;
  };
  while (i < in.size()) {
    switch (step_) {
      case Step::kSize:
      case Step::kTrailer: {
        const size_t nl = in.find('\n', i);
        const size_t take = (nl == std::string_view::npos ? in.size() : nl + 1) - i;
        line_.append(in.data() + i, take);
        i += take;
        if (step_ == Step::kTrailer && (trailer_bytes_ += take) > kMaxTrailerBytes)
          return done(fail(State::kMalformed, "chunked body: trailer section over 16 KiB"));
        if (line_.size() > kMaxLine) return done(fail(State::kMalformed, "chunked body: chunk-size line over 4 KiB"));
        if (nl == std::string_view::npos) return done(State::kNeedMore);
        if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
          return done(fail(State::kMalformed, "chunked body: a line not ended by CRLF"));
        line_.resize(line_.size() - 2);
        if (step_ == Step::kTrailer) {
          const bool end = line_.empty();
          for (unsigned char c : line_)
            if ((c < 0x20 && c != '\t') || c == 0x7f) return done(fail(State::kMalformed, "chunked body: control byte in a trailer"));
          line_.clear();
          if (end) return done(State::kDone);
          break;
        }
        uint64_t size = 0;
        size_t k = 0;
        for (; k < line_.size() && hex_digit_value(line_[k]) >= 0; ++k) {
          if (size > (UINT64_MAX >> 4)) return done(fail(State::kTooLarge, "chunked body: chunk size overflows"));
          size = (size << 4) | static_cast<uint64_t>(hex_digit_value(line_[k]));
        }
        if (k == 0) return done(fail(State::kMalformed, "chunked body: expected a hexadecimal chunk size"));
        if (k < line_.size() && line_[k] != ';' && line_[k] != ' ' && line_[k] != '\t')
          return done(fail(State::kMalformed, "chunked body: junk after the chunk size"));
        for (unsigned char c : line_)
          if ((c < 0x20 && c != '\t') || c == 0x7f) return done(fail(State::kMalformed, "chunked body: control byte in a chunk extension"));
        line_.clear();
        if (size == 0) {
          step_ = Step::kTrailer;
          break;
        }
        if (size > max_body_ - decoded_)
          return done(fail(State::kTooLarge, "request body over " + std::to_string(max_body_) + " bytes"));
        decoded_ += size;
        remaining_ = size;
        step_ = Step::kData;
        break;
      }
      case Step::kData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size() - i));
        body->append(in.data() + i, take);
        i += take;
        remaining_ -= take;
        if (remaining_ == 0) step_ = Step::kDataEnd;
        break;
      }
      case Step::kDataEnd: {
        line_.push_back(in[i++]);
        if (line_.size() < 2) break;
        if (line_ != "\r\n") return done(fail(State::kMalformed, "chunked body: chunk data not followed by CRLF"));
        line_.clear();
        step_ = Step::kSize;
        break;
      }
    }
  }
  return done(State::kNeedMore);
}

}  // namespace di::server::http
