// The sink and its lock. The stderr form is "deepinfer INFO  HH:MM:SS.mmm message", one line a
// record, so program output on stdout stays clean.
#include "base/log.h"

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <unistd.h>

namespace di::log {
namespace {

struct Sink {
  std::mutex mu;
  SinkFn fn = nullptr;
  void* user_data = nullptr;
  bool bar_open = false;  // a progress bar is on stderr's current line
};

Sink& sink() {
  static Sink s;
  return s;
}

std::atomic<int> g_max_level{static_cast<int>(Level::kWarn)};

void to_stderr(Level level, std::string_view message) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t t = system_clock::to_time_t(now);
  const int ms = static_cast<int>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::fprintf(stderr, "deepinfer %-5s %02d:%02d:%02d.%03d %.*s\n", level_name(level), tm.tm_hour, tm.tm_min,
               tm.tm_sec, ms, static_cast<int>(message.size()), message.data());
}

void vwrite(Level level, const char* fmt, va_list ap) {
  if (!enabled(level)) return;
  char buf[1024];
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, copy);
  va_end(copy);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    write(level, std::string_view(buf, static_cast<size_t>(n)));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  big.pop_back();
  write(level, big);
}

}  // namespace

void set_sink(SinkFn fn, void* user_data, Level max_level) {
  Sink& s = sink();
  std::lock_guard<std::mutex> l(s.mu);
  s.fn = fn;
  s.user_data = user_data;
  g_max_level.store(static_cast<int>(max_level));
}

bool enabled(Level level) { return static_cast<int>(level) <= g_max_level.load(std::memory_order_relaxed); }

void write(Level level, std::string_view message) {
  if (!enabled(level)) return;
  Sink& s = sink();
  std::lock_guard<std::mutex> l(s.mu);
  if (s.fn) {
    s.fn(s.user_data, static_cast<int32_t>(level), message.data(), message.size());
  } else {
    if (s.bar_open) std::fputc('\n', stderr);
    s.bar_open = false;
    to_stderr(level, message);
  }
}

bool progress_bar_available() {
  if (!enabled(Level::kInfo) || isatty(STDERR_FILENO) != 1) return false;
  Sink& s = sink();
  std::lock_guard<std::mutex> l(s.mu);
  return s.fn == nullptr;
}

void write_progress_bar(std::string_view bar) {
  Sink& s = sink();
  std::lock_guard<std::mutex> l(s.mu);
  if (s.fn) return;  // a handler was installed meanwhile: it gets records only
  // "\r" then the bar, then erase whatever a longer previous bar left to the right.
  std::fprintf(stderr, "\r%.*s\033[K", static_cast<int>(bar.size()), bar.data());
  std::fflush(stderr);
  s.bar_open = true;
}

void end_progress_bar() {
  Sink& s = sink();
  std::lock_guard<std::mutex> l(s.mu);
  if (!s.bar_open) return;
  std::fputc('\n', stderr);
  s.bar_open = false;
}

std::optional<Level> parse_level(std::string_view name) {
  if (name == "error") return Level::kError;
  if (name == "warn" || name == "warning") return Level::kWarn;
  if (name == "info") return Level::kInfo;
  if (name == "debug") return Level::kDebug;
  return std::nullopt;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kError: return "ERROR";
    case Level::kWarn: return "WARN";
    case Level::kInfo: return "INFO";
    case Level::kDebug: return "DEBUG";
  }
  return "INFO";
}

#define DI_LOG_DEFINE_(name, level) \
  void name(const char* fmt, ...) { \
    va_list ap;                     \
    va_start(ap, fmt);              \
    vwrite(level, fmt, ap);         \
    va_end(ap);                     \
  }
DI_LOG_DEFINE_(error, Level::kError)
DI_LOG_DEFINE_(warn, Level::kWarn)
DI_LOG_DEFINE_(info, Level::kInfo)
DI_LOG_DEFINE_(debug, Level::kDebug)
#undef DI_LOG_DEFINE_

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

}  // namespace di::log
