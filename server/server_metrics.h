// ServerMetrics: the HTTP side's counters (requests by route and status, streams open, client
// disconnects, deadlines hit, request latency) rendered as Prometheus text. The engine's own
// metrics come from di_engine_metrics and are appended by the /metrics handler, not here.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace di::server {

class ServerMetrics {
 public:
  void request_started() { std::lock_guard<std::mutex> l(mu_); ++in_flight_; }
  // `route` is the matched route pattern (never the raw path, which would let clients mint
  // label values); `seconds` from headers read to response done.
  // `started`: whether request_started ran for it (requests refused before routing did not).
  void request_finished(const std::string& route, int status, double seconds, bool started = true);
  void client_disconnected() { std::lock_guard<std::mutex> l(mu_); ++disconnects_; }
  void deadline_exceeded() { std::lock_guard<std::mutex> l(mu_); ++deadlines_; }
  // A streaming client that stopped reading, dropped after the write timeout (it is counted
  // as a disconnect too).
  void write_timed_out() { std::lock_guard<std::mutex> l(mu_); ++write_timeouts_; }
  void tokens(int64_t prompt, int64_t cached_prompt, int64_t completion);

  std::string to_prometheus() const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5, 1, 2.5, 5, 10, 30};
  mutable std::mutex mu_;
  int64_t in_flight_ = 0;
  int64_t disconnects_ = 0;
  int64_t deadlines_ = 0;
  int64_t write_timeouts_ = 0;
  int64_t prompt_tokens_ = 0, cached_prompt_tokens_ = 0, completion_tokens_ = 0;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::array<int64_t, kBuckets.size()> bucket_counts_{};
  int64_t latency_count_ = 0;
  double latency_sum_ = 0;
};

}  // namespace di::server
