// ChatChoices: joins the n completions of one Chat Completions request (n > 1) into the one
// stream or response the API defines — each completion's chunks carry its choice index, one
// usage chunk (the prompt counted once, completion tokens summed) and one [DONE] close the
// stream. Works on the parsers' JSON output only; knows nothing of the engine or HTTP.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::server {

class ChatChoiceStream {
 public:
  // Writes one `data:` payload to the client; false once the client is gone.
  using Emit = std::function<bool(std::string_view data)>;

  // One event of completion `index` as its parser wrote it. Rewrites the choice index and
  // holds back what belongs to the whole stream (each parser's usage chunk and [DONE]); the
  // first error event goes out and ends the stream. Returns false when `emit` failed.
  bool on_event(uint32_t index, std::string_view data, const Emit& emit);
  // After every completion ended: the joined usage chunk (when the request asked for
  // include_usage) and [DONE]; nothing after an error event. Returns false when `emit` failed.
  bool finish(const Emit& emit);

 private:
  bool failed_ = false;
  nlohmann::json usage_chunk_;  // the first parser's usage chunk, its usage summed into
};

// The non-streamed response of n completions: completion i's one choice becomes choices[i]
// (index i), usage counts the prompt once and sums the completions. A body with an error (the
// output failed) is returned as it is, the first one found.
std::string join_chat_responses(const std::vector<std::string>& bodies);

}  // namespace di::server
