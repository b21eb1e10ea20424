// SSE framing against the rules of the WHATWG HTML "server-sent events" section: a reader that
// follows them (implemented here, independently of the writer) gets back each event's name and
// data unchanged; write failures stick.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/sse_writer.h"

namespace di::server {
namespace {

struct Event {
  std::string name, data;
  bool operator==(const Event&) const = default;
};

// The spec's parsing algorithm, minus id/retry: lines end at CR, LF or CRLF; "field: value"
// (one leading space dropped); data lines join with LF; a blank line dispatches.
std::vector<Event> parse_sse(const std::string& s) {
  std::vector<Event> out;
  std::string name, data;
  bool has_data = false;
  size_t i = 0;
  while (i < s.size()) {
    size_t end = s.find_first_of("\r\n", i);
    if (end == std::string::npos) break;  // an unterminated line is not dispatched
    std::string line = s.substr(i, end - i);
    i = end + 1;
    if (s[end] == '\r' && i < s.size() && s[i] == '\n') ++i;
    if (line.empty()) {
      if (has_data) out.push_back({name, data});
      name.clear();
      data.clear();
      has_data = false;
      continue;
    }
    if (line[0] == ':') continue;
    size_t colon = line.find(':');
    std::string field = line.substr(0, colon), value;
    if (colon != std::string::npos) {
      value = line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    }
    if (field == "event") name = value;
    else if (field == "data") {
      if (has_data) data += '\n';
      data += value;
      has_data = true;
    }
  }
  return out;
}

TEST(SseFrame, RoundTripsThroughASpecReader) {
  const std::vector<Event> events = {
      {"", R"({"id":"chatcmpl-1","choices":[]})"},
      {"", "[DONE]"},
      {"message_start", R"({"type":"message_start"})"},
      {"response.output_text.delta", "line one\nline two\r\nline three\rfour"},
      {"x", ""},
      {"x", " leading space"},
  };
  std::string wire;
  for (const Event& e : events) wire += sse_frame(e.name, e.data);
  EXPECT_EQ(parse_sse(wire), (std::vector<Event>{
                                 events[0], events[1], events[2],
                                 {"response.output_text.delta", "line one\nline two\nline three\nfour"},
                                 events[4], events[5]}));
}

TEST(SseFrame, DataOnlyEventHasNoEventLine) {
  EXPECT_EQ(sse_frame("", "{}"), "data: {}\n\n");
  EXPECT_EQ(sse_frame("ping", "{}"), "event: ping\ndata: {}\n\n");
}

TEST(SseWriter, FirstFailedWriteSticksAndStopsWriting) {
  int calls = 0;
  bool accept = true;
  std::string wire;
  SseWriter w([&](const char* d, size_t n) {
    ++calls;
    if (!accept) return false;
    wire.append(d, n);
    return true;
  });
  EXPECT_TRUE(w.write_event("a", "1"));
  EXPECT_TRUE(w.write_comment("ping"));
  accept = false;
  EXPECT_FALSE(w.write_event("b", "2"));
  accept = true;
  EXPECT_FALSE(w.write_event("c", "3"));  // the client is gone; nothing more is written
  EXPECT_TRUE(w.failed());
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(w.events_written(), 1u);
  EXPECT_EQ(parse_sse(wire), (std::vector<Event>{{"a", "1"}}));
}

}  // namespace
}  // namespace di::server
