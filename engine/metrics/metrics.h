// EngineMetrics: counters, gauges and latency histograms of one engine, rendered as JSON and as
// Prometheus text. Thread-safe; the engine's threads record, any thread renders.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/kv/kv_cache_stats.h"

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

// The scheduler's queues and the KV cache as of the last step.
struct EngineGauges {
  int64_t num_waiting = 0;
  int64_t num_running = 0;
  int64_t num_preemptions = 0;
  KvCacheStats kv;
};

// One engine step's wall time split into consecutive phases, in seconds, as the step thread
// measured them with steady_clock. The phases tile the step: their sum is its wall time.
struct StepTiming {
  double schedule = 0;  // the scheduler picking the batch
  double prepare = 0;   // batch assembly: inputs and cache views (the runner's time outside forward)
  double forward = 0;   // the model's forward calls (on a device: until the logits are on the host)
  double sample = 0;    // sampling, stop checks, scheduler and sequence bookkeeping
  double output = 0;    // handing events to the output thread (and, when async scheduling is off,
                        // waiting for it) plus the gauges' snapshot
  std::chrono::steady_clock::time_point start, end;  // the step's first and last instant
};

// Totals of one phase over all steps.
struct PhaseTotal {
  double seconds = 0;
  int64_t count = 0;
  void add(double s) { seconds += s; ++count; }
};

// One sequence's verified draft in a step.
struct DraftOutcome {
  int32_t drafted = 0;
  int32_t accepted = 0;  // the kept prefix, <= drafted
};

class EngineMetrics {
 public:
  EngineMetrics();

  void on_request_submitted();
  void on_request_finished();
  void on_step(int64_t prompt_tokens, int64_t generation_tokens);  // the tokens of one step
  // Speculative decoding, once per step that verified drafts: each drafting sequence's draft
  // length and how many of its tokens were kept (a prefix).
  void on_drafts(std::span<const DraftOutcome> outcomes);
  void set_gauges(const EngineGauges& gauges);
  void on_first_token(double seconds);  // time to first token
  void on_inter_token(double seconds);  // gap between two tokens of one completion
  // Step thread, once per step that ran a batch, after its last phase; counts the step.
  void on_step_timing(const StepTiming& t);
  // Output thread, once per batch of events: detokenization, stop strings, stream delivery.
  void on_output_batch(double seconds);

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
  int64_t draft_tokens_ = 0;
  int64_t accepted_draft_tokens_ = 0;
  int64_t draft_verifies_ = 0;     // sequence-steps that verified a draft
  int64_t draft_steps_ = 0;        // steps that verified one or more drafts
  std::vector<int64_t> drafted_at_, accepted_at_;  // per draft position (0: the first draft token)
  Histogram ttft_;
  Histogram itl_;
  Histogram step_time_;
  PhaseTotal schedule_, prepare_, forward_, sample_, output_;
  PhaseTotal output_thread_;
  bool any_step_ = false;
  std::chrono::steady_clock::time_point first_step_start_, last_step_end_;
};

}  // namespace di::engine
