// JsonLog: formatting and the single write per line.
#include "server/json_log.h"

#include <chrono>
#include <ctime>
#include <string>

namespace di::server {
namespace {

std::string utc_now() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t t = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

}  // namespace

void JsonLog::write(std::string_view level, std::string_view event, const nlohmann::json& fields) {
  nlohmann::ordered_json line;
  line["ts"] = utc_now();
  line["level"] = level;
  line["event"] = event;
  if (fields.is_object())
    for (const auto& [k, v] : fields.items()) line[k] = v;
  // Replace invalid UTF-8 (a client-sent path, say) instead of throwing from dump().
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace di::server
