// The per-step time breakdown: EngineMetrics' aggregation on given timings (exact), and the
// engine's own recording on ToyModel (consistency only: counts, tiling, forward inside wall).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/metrics/metrics.h"
#include "tests/engine/engine_test_util.h"

namespace di::engine {
namespace {

using namespace testing::engine_util;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::steady_clock;

const char* const kPhases[] = {"schedule", "prepare", "forward", "sample", "output"};

// The value of the sample line `series value` in a Prometheus text, or -1 when absent.
double prom_value(const std::string& prom, const std::string& series) {
  const size_t at = prom.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::strtod(prom.c_str() + at + series.size() + 2, nullptr);
}

StepTiming timing_at(steady_clock::time_point start, double schedule, double prepare, double forward,
                     double sample, double output) {
  const auto took = duration_cast<steady_clock::duration>(
      std::chrono::duration<double>(schedule + prepare + forward + sample + output));
  return {.schedule = schedule, .prepare = prepare, .forward = forward, .sample = sample,
          .output = output, .start = start, .end = start + took};
}

TEST(StepMetrics, AggregatesPhasesHistogramAndBusyBasis) {
  EngineMetrics m;
  const auto t0 = steady_clock::now();
  // Two steps 1 s apart: 10 ms and 40 ms of wall time.
  m.on_step_timing(timing_at(t0, 0.001, 0.002, 0.005, 0.001, 0.001));
  m.on_step_timing(timing_at(t0 + std::chrono::seconds(1), 0.002, 0.003, 0.030, 0.004, 0.001));
  m.on_output_batch(0.25);
  const auto j = nlohmann::json::parse(m.to_json());
  EXPECT_EQ(j["steps"], 2);
  const double want[] = {0.003, 0.005, 0.035, 0.005, 0.002};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(j["step_phases"][kPhases[i]]["count"], 2) << kPhases[i];
    EXPECT_NEAR(j["step_phases"][kPhases[i]]["seconds"].get<double>(), want[i], 1e-12) << kPhases[i];
  }
  EXPECT_EQ(j["output_thread"]["count"], 1);
  EXPECT_DOUBLE_EQ(j["output_thread"]["seconds"].get<double>(), 0.25);
  const auto& h = j["step_time_seconds"];
  EXPECT_EQ(h["count"], 2);
  EXPECT_NEAR(h["sum"].get<double>(), 0.050, 1e-6);
  // 10 ms lands in le=0.01, 40 ms in le=0.05; buckets are cumulative.
  for (const auto& b : h["buckets"]) {
    if (b["le"] == 0.005) { EXPECT_EQ(b["count"], 0); }
    if (b["le"] == 0.01) { EXPECT_EQ(b["count"], 1); }
    if (b["le"] == 0.025) { EXPECT_EQ(b["count"], 1); }
    if (b["le"] == 0.05) { EXPECT_EQ(b["count"], 2); }
  }
  EXPECT_NEAR(j["busy_forward_seconds"].get<double>(), 0.035, 1e-12);
  EXPECT_NEAR(j["busy_wall_seconds"].get<double>(), 1.040, 1e-6);  // first start to last end
  EXPECT_NEAR(j["busy_ratio"].get<double>(), 0.035 / 1.040, 1e-6);

  const std::string prom = m.to_prometheus();
  EXPECT_NE(prom.find("# TYPE deepinfer_step_phase_seconds_total counter\n"), std::string::npos) << prom;
  for (int i = 0; i < 5; ++i) {
    const std::string ph = std::string("{phase=\"") + kPhases[i] + "\"}";
    EXPECT_NEAR(prom_value(prom, "deepinfer_step_phase_seconds_total" + ph), want[i], 1e-12) << ph << prom;
    EXPECT_EQ(prom_value(prom, "deepinfer_step_phase_steps_total" + ph), 2) << ph;
  }
  EXPECT_EQ(prom_value(prom, "deepinfer_steps_total"), 2);
  EXPECT_NE(prom.find("# TYPE deepinfer_step_time_seconds histogram\n"), std::string::npos);
  EXPECT_EQ(prom_value(prom, "deepinfer_step_time_seconds_bucket{le=\"0.005\"}"), 0);
  EXPECT_EQ(prom_value(prom, "deepinfer_step_time_seconds_bucket{le=\"0.01\"}"), 1);
  EXPECT_EQ(prom_value(prom, "deepinfer_step_time_seconds_bucket{le=\"+Inf\"}"), 2);
  EXPECT_EQ(prom_value(prom, "deepinfer_step_time_seconds_count"), 2);
  EXPECT_NEAR(prom_value(prom, "deepinfer_step_time_seconds_sum"), 0.050, 1e-6);
  EXPECT_EQ(prom_value(prom, "deepinfer_output_thread_batches_total"), 1);
  EXPECT_DOUBLE_EQ(prom_value(prom, "deepinfer_output_thread_seconds_total"), 0.25);
  EXPECT_NEAR(prom_value(prom, "deepinfer_busy_forward_seconds_total"), 0.035, 1e-12);
  EXPECT_NEAR(prom_value(prom, "deepinfer_busy_wall_seconds_total"), 1.040, 1e-6);
  EXPECT_NEAR(prom_value(prom, "deepinfer_busy_ratio"), 0.035 / 1.040, 1e-6);
  EXPECT_NE(prom.find("# TYPE deepinfer_busy_ratio gauge\n"), std::string::npos);
}

// Per-position draft acceptance: three drafting sequences over two steps (k = 3, 1, 2 drafted,
// 2, 1, 0 kept) and one sequence without a draft.
TEST(StepMetrics, DraftOutcomesPerPositionAndMeanAcceptedLength) {
  EngineMetrics m;
  const DraftOutcome step1[] = {{3, 2}, {0, 0}, {1, 1}};
  const DraftOutcome step2[] = {{2, 0}};
  m.on_drafts(step1);
  m.on_drafts(step2);
  m.on_drafts({});  // a step that verified nothing
  const auto j = nlohmann::json::parse(m.to_json());
  EXPECT_EQ(j["spec_draft_tokens"], 6);
  EXPECT_EQ(j["spec_accepted_tokens"], 3);
  EXPECT_EQ(j["spec_verifies"], 3);
  EXPECT_EQ(j["spec_verify_steps"], 2);
  EXPECT_DOUBLE_EQ(j["spec_mean_accepted_length"].get<double>(), 2.0);   // 1 + 3 / 3
  EXPECT_DOUBLE_EQ(j["spec_draft_tokens_per_step"].get<double>(), 3.0);  // 6 over 2 steps
  const auto& by = j["spec_acceptance_by_position"];
  ASSERT_EQ(by.size(), 3u);
  const int64_t drafted[] = {3, 2, 1}, accepted[] = {2, 1, 0};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(by[i]["position"], i + 1);
    EXPECT_EQ(by[i]["drafted"], drafted[i]) << i;
    EXPECT_EQ(by[i]["accepted"], accepted[i]) << i;
    EXPECT_DOUBLE_EQ(by[i]["rate"].get<double>(), double(accepted[i]) / double(drafted[i])) << i;
  }
  const std::string prom = m.to_prometheus();
  EXPECT_EQ(prom_value(prom, "deepinfer_spec_verifies_total"), 3);
  EXPECT_EQ(prom_value(prom, "deepinfer_spec_position_drafted_total{position=\"2\"}"), 2);
  EXPECT_EQ(prom_value(prom, "deepinfer_spec_position_accepted_total{position=\"1\"}"), 2);
  EXPECT_EQ(prom_value(prom, "deepinfer_spec_position_accepted_total{position=\"3\"}"), 0);
}

TEST(StepMetrics, NoStepYetReportsZeros) {
  EngineMetrics m;
  const auto j = nlohmann::json::parse(m.to_json());
  EXPECT_EQ(j["steps"], 0);
  for (const char* p : kPhases) EXPECT_EQ(j["step_phases"][p]["count"], 0) << p;
  EXPECT_EQ(j["busy_wall_seconds"], 0.0);
  EXPECT_EQ(j["busy_ratio"], 0.0);
  EXPECT_EQ(j["step_time_seconds"]["count"], 0);
  EXPECT_TRUE(j["spec_acceptance_by_position"].empty());
  EXPECT_EQ(j["spec_mean_accepted_length"], 0.0);
}

// The last step records its timing after its final chunk is out: wait for it.
nlohmann::json metrics_after_steps(LLMEngine& e, int64_t steps) {
  nlohmann::json m;
  for (int i = 0; i < 4000; ++i) {
    m = nlohmann::json::parse(e.metrics_json());
    if (m["steps"].get<int64_t>() >= steps) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return m;
}

void expect_consistent(const nlohmann::json& m, int64_t steps, double min_forward_per_step) {
  EXPECT_EQ(m["steps"], steps) << m.dump();
  double sum = 0;
  for (const char* p : kPhases) {
    EXPECT_EQ(m["step_phases"][p]["count"], steps) << p;
    const double s = m["step_phases"][p]["seconds"].get<double>();
    EXPECT_GE(s, 0.0) << p;
    sum += s;
  }
  // The phases tile each step, so together they are the histogram's sum of step wall times.
  EXPECT_EQ(m["step_time_seconds"]["count"], steps);
  EXPECT_NEAR(sum, m["step_time_seconds"]["sum"].get<double>(), 1e-6 * static_cast<double>(steps));
  const double forward = m["step_phases"]["forward"]["seconds"].get<double>();
  EXPECT_GE(forward, min_forward_per_step * static_cast<double>(steps));  // ToyModel sleeps that long
  EXPECT_EQ(m["busy_forward_seconds"].get<double>(), forward);
  EXPECT_LE(forward, m["busy_wall_seconds"].get<double>());
  EXPECT_LE(m["step_time_seconds"]["sum"].get<double>(), m["busy_wall_seconds"].get<double>() + 1e-9);
  EXPECT_GT(m["busy_ratio"].get<double>(), 0.0);
  EXPECT_LE(m["busy_ratio"].get<double>(), 1.0);
  EXPECT_GE(m["output_thread"]["count"].get<int64_t>(), 1);
  EXPECT_GE(m["output_thread"]["seconds"].get<double>(), 0.0);
}

TEST(StepMetrics, EngineRecordsEveryStepsPhases) {
  for (bool async : {true, false}) {
    EngineConfig c;
    c.async_scheduling = async;
    auto e = make_engine(c, 0, 2);  // each forward sleeps 2 ms
    SamplingParams p = greedy(10);
    p.ignore_eos = true;
    auto s = e->submit(prompt_of(7, 1), p);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(drain(**s)[0].tokens.size(), 10u);
    // One prefill step (it draws the first token) and nine decode steps.
    expect_consistent(metrics_after_steps(*e, 10), 10, 0.002);
    const std::string prom = e->metrics_prometheus();
    for (const char* ph : kPhases)
      EXPECT_EQ(prom_value(prom, std::string("deepinfer_step_phase_steps_total{phase=\"") + ph + "\"}"), 10)
          << ph << "\n" << prom;
    EXPECT_EQ(prom_value(prom, "deepinfer_step_time_seconds_count"), 10);
  }
}

TEST(StepMetrics, BatchedRequestsCountOneStepPerBatch) {
  EngineConfig c;
  c.max_num_seqs = 4;
  auto e = make_engine(c, 0, 1);
  SamplingParams p = greedy(6);
  p.ignore_eos = true;
  const auto out = run_batch(*e, {prompt_of(5, 1), prompt_of(9, 2), prompt_of(13, 3), prompt_of(17, 4)},
                             [&](int) { return p; });
  for (const auto& o : out) EXPECT_EQ(o.tokens.size(), 6u);
  // One more request after them: when its chunk is out, every step of the batch has recorded
  // its timing (the step thread records a step before it schedules the next). Whatever the
  // snapshot, the counts agree with each other.
  SamplingParams one = greedy(1);
  auto s = e->submit(prompt_of(3, 9), one);
  ASSERT_TRUE(s.is_ok());
  drain(**s);
  const nlohmann::json m = nlohmann::json::parse(e->metrics_json());
  // However the four were batched, each step draws one to four of their 24 tokens.
  const int64_t steps = m["steps"].get<int64_t>();
  EXPECT_GE(steps, 6);
  EXPECT_LE(steps, 25);
  expect_consistent(m, steps, 0.001);
  EXPECT_EQ(m["generation_tokens"], 25);
}

}  // namespace
}  // namespace di::engine
