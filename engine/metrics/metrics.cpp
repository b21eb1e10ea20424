// EngineMetrics: recording and the two renderings.
#include "engine/metrics/metrics.h"

#include <sstream>

#include <nlohmann/json.hpp>

namespace di::engine {

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  ++count_;
  sum_ += v;
}

EngineMetrics::EngineMetrics()
    : start_(std::chrono::steady_clock::now()),
      ttft_({0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      itl_({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}) {}

void EngineMetrics::on_request_submitted() {
  std::lock_guard<std::mutex> l(mu_);
  ++requests_submitted_;
}

void EngineMetrics::on_request_finished() {
  std::lock_guard<std::mutex> l(mu_);
  ++requests_finished_;
}

void EngineMetrics::on_step(int64_t prompt_tokens, int64_t generation_tokens) {
  std::lock_guard<std::mutex> l(mu_);
  prompt_tokens_ += prompt_tokens;
  generation_tokens_ += generation_tokens;
  ++steps_;
}

void EngineMetrics::set_gauges(const EngineGauges& gauges) {
  std::lock_guard<std::mutex> l(mu_);
  gauges_ = gauges;
}

void EngineMetrics::on_first_token(double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  ttft_.observe(seconds);
}

void EngineMetrics::on_inter_token(double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  itl_.observe(seconds);
}

namespace {

nlohmann::json histogram_json(const Histogram& h) {
  nlohmann::json buckets = nlohmann::json::array();
  uint64_t cum = 0;
  for (size_t i = 0; i < h.counts().size(); ++i) {
    cum += h.counts()[i];
    buckets.push_back({{"le", i < h.bounds().size() ? nlohmann::json(h.bounds()[i]) : nlohmann::json("+Inf")},
                       {"count", cum}});
  }
  return {{"count", h.count()}, {"sum", h.sum()}, {"buckets", buckets}};
}

void histogram_prom(std::ostringstream& o, const std::string& name, const std::string& help, const Histogram& h) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
  uint64_t cum = 0;
  for (size_t i = 0; i < h.counts().size(); ++i) {
    cum += h.counts()[i];
    o << name << "_bucket{le=\"";
    if (i < h.bounds().size()) o << h.bounds()[i]; else o << "+Inf";
    o << "\"} " << cum << "\n";
  }
  o << name << "_sum " << h.sum() << "\n" << name << "_count " << h.count() << "\n";
}

}  // namespace

std::string EngineMetrics::to_json() const {
  std::lock_guard<std::mutex> l(mu_);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double usage = gauges_.kv_blocks_total > 0
      ? 1.0 - static_cast<double>(gauges_.kv_blocks_free) / static_cast<double>(gauges_.kv_blocks_total) : 0.0;
  const double hit_rate = gauges_.prefix_queries > 0
      ? static_cast<double>(gauges_.prefix_hits) / static_cast<double>(gauges_.prefix_queries) : 0.0;
  nlohmann::json j = {
      {"num_requests_waiting", gauges_.num_waiting},
      {"num_requests_running", gauges_.num_running},
      {"requests_submitted", requests_submitted_},
      {"requests_finished", requests_finished_},
      {"prompt_tokens", prompt_tokens_},
      {"generation_tokens", generation_tokens_},
      {"steps", steps_},
      {"num_preemptions", gauges_.num_preemptions},
      {"kv_blocks_total", gauges_.kv_blocks_total},
      {"kv_blocks_free", gauges_.kv_blocks_free},
      {"kv_blocks_cached", gauges_.kv_blocks_cached},
      {"kv_cache_usage", usage},
      {"prefix_cache_queries", gauges_.prefix_queries},
      {"prefix_cache_hits", gauges_.prefix_hits},
      {"prefix_cache_hit_rate", hit_rate},
      {"uptime_seconds", elapsed},
      {"generation_tokens_per_second", elapsed > 0 ? static_cast<double>(generation_tokens_) / elapsed : 0.0},
      {"time_to_first_token_seconds", histogram_json(ttft_)},
      {"inter_token_latency_seconds", histogram_json(itl_)},
  };
  return j.dump();
}

std::string EngineMetrics::to_prometheus() const {
  const nlohmann::json j = nlohmann::json::parse(to_json());
  std::ostringstream o;
  auto metric = [&](const char* name, const char* type, const char* help, const nlohmann::json& v) {
    o << "# HELP deepinfer_" << name << " " << help << "\n# TYPE deepinfer_" << name << " " << type
      << "\ndeepinfer_" << name << " " << v.dump() << "\n";
  };
  metric("num_requests_waiting", "gauge", "Requests waiting to be scheduled.", j["num_requests_waiting"]);
  metric("num_requests_running", "gauge", "Sequences in the running queue.", j["num_requests_running"]);
  metric("requests_submitted_total", "counter", "Requests submitted.", j["requests_submitted"]);
  metric("requests_finished_total", "counter", "Requests finished (any reason).", j["requests_finished"]);
  metric("prompt_tokens_total", "counter", "Prompt tokens computed (prefill).", j["prompt_tokens"]);
  metric("generation_tokens_total", "counter", "Tokens generated.", j["generation_tokens"]);
  metric("num_preemptions_total", "counter", "Sequences preempted (recompute).", j["num_preemptions"]);
  metric("kv_cache_usage_ratio", "gauge", "Fraction of KV blocks in use.", j["kv_cache_usage"]);
  metric("prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.", j["prefix_cache_queries"]);
  metric("prefix_cache_hits_total", "counter", "Prompt tokens served by the prefix cache.", j["prefix_cache_hits"]);
  metric("generation_tokens_per_second", "gauge", "Generated tokens per second since start.", j["generation_tokens_per_second"]);
  {
    std::lock_guard<std::mutex> l(mu_);
    histogram_prom(o, "deepinfer_time_to_first_token_seconds", "Time from submission to the first token.", ttft_);
    histogram_prom(o, "deepinfer_inter_token_latency_seconds", "Time between two tokens of one completion.", itl_);
  }
  return o.str();
}

}  // namespace di::engine
