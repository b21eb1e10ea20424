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
      itl_({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}),
      step_time_({0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}) {}

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
}

void EngineMetrics::on_drafts(std::span<const DraftOutcome> outcomes) {
  std::lock_guard<std::mutex> l(mu_);
  bool any = false;
  for (const DraftOutcome& o : outcomes) {
    if (o.drafted <= 0) continue;
    any = true;
    ++draft_verifies_;
    draft_tokens_ += o.drafted;
    accepted_draft_tokens_ += o.accepted;
    if (drafted_at_.size() < static_cast<size_t>(o.drafted)) {
      drafted_at_.resize(static_cast<size_t>(o.drafted), 0);
      accepted_at_.resize(static_cast<size_t>(o.drafted), 0);
    }
    for (int32_t i = 0; i < o.drafted; ++i) {
      ++drafted_at_[static_cast<size_t>(i)];
      if (i < o.accepted) ++accepted_at_[static_cast<size_t>(i)];
    }
  }
  draft_steps_ += any;
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

void EngineMetrics::on_step_timing(const StepTiming& t) {
  std::lock_guard<std::mutex> l(mu_);
  // Counted here, not in on_step, so a reader always sees steps equal to each phase's count.
  ++steps_;
  schedule_.add(t.schedule);
  prepare_.add(t.prepare);
  forward_.add(t.forward);
  sample_.add(t.sample);
  output_.add(t.output);
  step_time_.observe(std::chrono::duration<double>(t.end - t.start).count());
  if (!any_step_) first_step_start_ = t.start;
  any_step_ = true;
  last_step_end_ = t.end;
}

void EngineMetrics::on_output_batch(double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  output_thread_.add(seconds);
}

namespace {

nlohmann::json phase_json(const PhaseTotal& p) { return {{"seconds", p.seconds}, {"count", p.count}}; }

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

// From histogram_json's shape, so one rendering reads one snapshot.
void histogram_prom(std::ostringstream& o, const std::string& name, const std::string& help, const nlohmann::json& h) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
  for (const nlohmann::json& b : h["buckets"]) {
    o << name << "_bucket{le=\"";
    if (b["le"].is_string()) o << "+Inf"; else o << b["le"].get<double>();
    o << "\"} " << b["count"].get<uint64_t>() << "\n";
  }
  o << name << "_sum " << h["sum"].dump() << "\n" << name << "_count " << h["count"].get<uint64_t>() << "\n";
}

// [{position (1-based), drafted, accepted, rate}]: how often the i-th draft token was kept when
// a draft reached it.
nlohmann::json acceptance_by_position(const std::vector<int64_t>& drafted, const std::vector<int64_t>& accepted) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < drafted.size(); ++i)
    a.push_back({{"position", i + 1},
                 {"drafted", drafted[i]},
                 {"accepted", accepted[i]},
                 {"rate", drafted[i] > 0 ? static_cast<double>(accepted[i]) / static_cast<double>(drafted[i]) : 0.0}});
  return a;
}

}  // namespace

std::string EngineMetrics::to_json() const {
  std::lock_guard<std::mutex> l(mu_);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const KvCacheStats& kv = gauges_.kv;
  const double usage = kv.num_blocks > 0
      ? 1.0 - static_cast<double>(kv.num_free_blocks) / static_cast<double>(kv.num_blocks) : 0.0;
  const double hit_rate = kv.prefix_queries > 0
      ? static_cast<double>(kv.prefix_hits) / static_cast<double>(kv.prefix_queries) : 0.0;
  // The busy basis: forward time against the wall time from the first step's start to the last
  // one's end, so idle time before the first request does not count (idle gaps between requests
  // do: a scraper takes deltas over the period it calls steady).
  const double busy_wall = any_step_ ? std::chrono::duration<double>(last_step_end_ - first_step_start_).count() : 0.0;
  nlohmann::json j = {
      {"num_requests_waiting", gauges_.num_waiting},
      {"num_requests_running", gauges_.num_running},
      {"requests_submitted", requests_submitted_},
      {"requests_finished", requests_finished_},
      {"prompt_tokens", prompt_tokens_},
      {"generation_tokens", generation_tokens_},
      {"steps", steps_},
      {"spec_draft_tokens", draft_tokens_},
      {"spec_accepted_tokens", accepted_draft_tokens_},
      {"spec_acceptance_rate", draft_tokens_ > 0 ? static_cast<double>(accepted_draft_tokens_) / draft_tokens_ : 0.0},
      {"spec_verifies", draft_verifies_},
      {"spec_verify_steps", draft_steps_},
      // Tokens a drafting sequence gains per verify: its accepted drafts and the draw after them.
      {"spec_mean_accepted_length",
       draft_verifies_ > 0 ? 1.0 + static_cast<double>(accepted_draft_tokens_) / draft_verifies_ : 0.0},
      {"spec_draft_tokens_per_step", draft_steps_ > 0 ? static_cast<double>(draft_tokens_) / draft_steps_ : 0.0},
      {"spec_acceptance_by_position", acceptance_by_position(drafted_at_, accepted_at_)},
      {"num_preemptions", gauges_.num_preemptions},
      {"kv_blocks_total", kv.num_blocks},
      {"kv_blocks_free", kv.num_free_blocks},
      {"kv_blocks_cached", kv.num_cached_blocks},
      {"kv_cache_usage", usage},
      {"prefix_cache_queries", kv.prefix_queries},
      {"prefix_cache_hits", kv.prefix_hits},
      {"prefix_cache_hit_rate", hit_rate},
      {"uptime_seconds", elapsed},
      {"generation_tokens_per_second", elapsed > 0 ? static_cast<double>(generation_tokens_) / elapsed : 0.0},
      {"time_to_first_token_seconds", histogram_json(ttft_)},
      {"inter_token_latency_seconds", histogram_json(itl_)},
      {"step_time_seconds", histogram_json(step_time_)},
      {"step_phases", {{"schedule", phase_json(schedule_)},
                       {"prepare", phase_json(prepare_)},
                       {"forward", phase_json(forward_)},
                       {"sample", phase_json(sample_)},
                       {"output", phase_json(output_)}}},
      {"output_thread", phase_json(output_thread_)},
      {"busy_forward_seconds", forward_.seconds},
      {"busy_wall_seconds", busy_wall},
      {"busy_ratio", busy_wall > 0 ? forward_.seconds / busy_wall : 0.0},
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
  metric("steps_total", "counter", "Engine steps that ran a batch.", j["steps"]);
  metric("spec_draft_tokens_total", "counter", "Speculative decoding: draft tokens verified.", j["spec_draft_tokens"]);
  metric("spec_accepted_tokens_total", "counter", "Speculative decoding: draft tokens accepted.", j["spec_accepted_tokens"]);
  metric("spec_verifies_total", "counter", "Speculative decoding: sequence-steps that verified a draft.",
         j["spec_verifies"]);
  metric("spec_verify_steps_total", "counter", "Speculative decoding: steps that verified drafts.",
         j["spec_verify_steps"]);
  for (const char* kind : {"drafted", "accepted"}) {
    o << "# HELP deepinfer_spec_position_" << kind << "_total Speculative decoding: draft tokens " << kind
      << " at each draft position (1: the first).\n# TYPE deepinfer_spec_position_" << kind << "_total counter\n";
    for (const auto& p : j["spec_acceptance_by_position"])
      o << "deepinfer_spec_position_" << kind << "_total{position=\"" << p["position"].get<int64_t>() << "\"} "
        << p[kind].get<int64_t>() << "\n";
  }
  auto phases = [&](const char* name, const char* help, const char* field) {
    o << "# HELP deepinfer_" << name << " " << help << "\n# TYPE deepinfer_" << name << " counter\n";
    for (const char* phase : {"schedule", "prepare", "forward", "sample", "output"})
      o << "deepinfer_" << name << "{phase=\"" << phase << "\"} " << j["step_phases"][phase][field].dump() << "\n";
  };
  phases("step_phase_seconds_total", "Step-thread seconds per phase of a step.", "seconds");
  phases("step_phase_steps_total", "Steps that recorded each phase.", "count");
  metric("output_thread_seconds_total", "counter", "Output-thread seconds: detokenization, stop strings, delivery.",
         j["output_thread"]["seconds"]);
  metric("output_thread_batches_total", "counter", "Batches of step events the output thread processed.",
         j["output_thread"]["count"]);
  metric("busy_forward_seconds_total", "counter", "Seconds in the model's forward (the busy numerator).",
         j["busy_forward_seconds"]);
  metric("busy_wall_seconds_total", "counter", "Seconds from the first step's start to the last step's end.",
         j["busy_wall_seconds"]);
  metric("busy_ratio", "gauge", "busy_forward_seconds_total / busy_wall_seconds_total.", j["busy_ratio"]);
  histogram_prom(o, "deepinfer_time_to_first_token_seconds", "Time from submission to the first token.",
                 j["time_to_first_token_seconds"]);
  histogram_prom(o, "deepinfer_inter_token_latency_seconds", "Time between two tokens of one completion.",
                 j["inter_token_latency_seconds"]);
  histogram_prom(o, "deepinfer_step_time_seconds", "Wall time of one engine step (all phases).", j["step_time_seconds"]);
  return o.str();
}

}  // namespace di::engine
