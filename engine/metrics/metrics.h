// EngineMetrics: counters, gauges and latency histograms of one engine, rendered as JSON and as
// Prometheus text. Thread-safe; the engine's threads record, any thread renders.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace di::engine {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  const std::vector<uint64_t>& counts() const { return counts_; }  // per bucket, last = +Inf
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

struct EngineGauges {
  int64_t num_waiting = 0;
  int64_t num_running = 0;
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_free = 0;
  int64_t kv_blocks_cached = 0;
  int64_t prefix_queries = 0;
  int64_t prefix_hits = 0;
  int64_t num_preemptions = 0;
};

class EngineMetrics {
 public:
  EngineMetrics();

  void on_request_submitted();
  void on_request_finished();
  void on_step(int64_t prompt_tokens, int64_t generation_tokens);
  void set_gauges(const EngineGauges& gauges);
  void on_first_token(double seconds);  // time to first token
  void on_inter_token(double seconds);  // gap between two tokens of one completion

  std::string to_json() const;
  std::string to_prometheus() const;

 private:
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
  EngineGauges gauges_;
  int64_t requests_submitted_ = 0;
  int64_t requests_finished_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  int64_t steps_ = 0;
  Histogram ttft_;
  Histogram itl_;
};

}  // namespace di::engine
