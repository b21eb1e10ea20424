// JsonLog: structured logs, one JSON object per line on stderr ({"ts", "level", "event", ...}),
// so a log shipper needs no parsing rules. Thread-safe; lines never interleave. Knows nothing of
// HTTP; callers pass the fields.
#pragma once

#include <cstdio>
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

namespace di::server {

class JsonLog {
 public:
  explicit JsonLog(std::FILE* out = stderr) : out_(out) {}
  // Writes {"ts": RFC 3339 UTC with milliseconds, "level", "event", ...fields}.
  void write(std::string_view level, std::string_view event, const nlohmann::json& fields = {});
  void info(std::string_view event, const nlohmann::json& fields = {}) { write("info", event, fields); }
  void warn(std::string_view event, const nlohmann::json& fields = {}) { write("warn", event, fields); }
  void error(std::string_view event, const nlohmann::json& fields = {}) { write("error", event, fields); }

 private:
  std::FILE* out_;
  std::mutex mu_;
};

}  // namespace di::server
