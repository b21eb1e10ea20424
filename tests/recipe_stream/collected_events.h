// The parser's event callback for the C ABI tests: every (event, data) pair in order.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace di::test {

struct Collected {
  std::vector<std::pair<std::string, std::string>> events;
};

// A di_event_fn that appends to the Collected passed as `user`.
inline void collect(void* user, const char* event, size_t event_len, const char* data, size_t data_len) {
  static_cast<Collected*>(user)->events.push_back({std::string(event, event_len), std::string(data, data_len)});
}

}  // namespace di::test
