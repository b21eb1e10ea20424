// ServerMetrics: counting and the Prometheus text exposition format.
#include "server/server_metrics.h"

#include <sstream>

namespace di::server {

void ServerMetrics::request_finished(const std::string& route, int status, double seconds, bool started) {
  std::lock_guard<std::mutex> l(mu_);
  if (started) --in_flight_;
  ++requests_[{route, status}];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++bucket_counts_[i];
  ++latency_count_;
  latency_sum_ += seconds;
}

void ServerMetrics::tokens(int64_t prompt, int64_t cached_prompt, int64_t completion) {
  std::lock_guard<std::mutex> l(mu_);
  if (prompt > 0) prompt_tokens_ += prompt;
  if (cached_prompt > 0) cached_prompt_tokens_ += cached_prompt;
  if (completion > 0) completion_tokens_ += completion;
}

std::string ServerMetrics::to_prometheus() const {
  std::lock_guard<std::mutex> l(mu_);
  std::ostringstream o;
  auto scalar = [&](const char* name, const char* type, const char* help, int64_t v) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << ' ' << v << '\n';
  };
  o << "# HELP deepinfer_http_requests_total HTTP requests answered, by route and status.\n"
       "# TYPE deepinfer_http_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    o << "deepinfer_http_requests_total{route=\"" << key.first << "\",status=\"" << key.second
      << "\"} " << n << '\n';
  scalar("deepinfer_http_requests_in_flight", "gauge", "HTTP requests being answered.", in_flight_);
  scalar("deepinfer_http_client_disconnects_total", "counter",
         "Requests whose client went away before the end (their engine request was cancelled).",
         disconnects_);
  scalar("deepinfer_http_write_timeouts_total", "counter",
         "Streams dropped because the client read nothing for the write timeout (also disconnects).",
         write_timeouts_);
  scalar("deepinfer_http_deadline_exceeded_total", "counter",
         "Requests cancelled by the per-request deadline.", deadlines_);
  scalar("deepinfer_http_prompt_tokens_total", "counter", "Prompt tokens of answered requests.", prompt_tokens_);
  scalar("deepinfer_http_cached_prompt_tokens_total", "counter",
         "Prompt tokens served from the prefix cache.", cached_prompt_tokens_);
  scalar("deepinfer_http_completion_tokens_total", "counter", "Completion tokens sent.", completion_tokens_);
  o << "# HELP deepinfer_http_request_duration_seconds Time from request to the response's end.\n"
       "# TYPE deepinfer_http_request_duration_seconds histogram\n";
  for (size_t i = 0; i < kBuckets.size(); ++i)
    o << "deepinfer_http_request_duration_seconds_bucket{le=\"" << kBuckets[i] << "\"} "
      << bucket_counts_[i] << '\n';
  o << "deepinfer_http_request_duration_seconds_bucket{le=\"+Inf\"} " << latency_count_ << '\n'
    << "deepinfer_http_request_duration_seconds_sum " << latency_sum_ << '\n'
    << "deepinfer_http_request_duration_seconds_count " << latency_count_ << '\n';
  return o.str();
}

}  // namespace di::server
