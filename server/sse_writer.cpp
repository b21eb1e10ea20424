// SseWriter: framing and failure tracking.
#include "server/sse_writer.h"

namespace di::server {

std::string sse_frame(std::string_view event, std::string_view data) {
  std::string out;
  out.reserve(event.size() + data.size() + 16);
  if (!event.empty()) {
    out += "event: ";
    out += event;
    out += '\n';
  }
  size_t start = 0;
  for (;;) {
    size_t end = data.find_first_of("\r\n", start);
    out += "data: ";
    out += data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
    if (data[end] == '\r' && start < data.size() && data[start] == '\n') ++start;  // CRLF is one end
    if (start == data.size()) break;  // a trailing line end adds no empty data line
  }
  out += '\n';
  return out;
}

bool SseWriter::write_raw(const std::string& bytes) {
  if (failed_) return false;
  if (!sink_(bytes.data(), bytes.size())) failed_ = true;
  return !failed_;
}

bool SseWriter::write_event(std::string_view event, std::string_view data) {
  if (!write_raw(sse_frame(event, data))) return false;
  ++events_;
  return true;
}

bool SseWriter::write_comment(std::string_view text) {
  std::string line = ": ";
  line += text;
  line += "\n\n";
  return write_raw(line);
}

}  // namespace di::server
