// LLMEngine's threads and metrics on ToyModel: with async scheduling the step thread runs the
// next forward while the output thread is still busy with the last step's chunks (and without
// it, it does not); the metrics count queues, tokens and latencies exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/engine/engine_test_util.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

using testing::ToyModel;
using testing::ToyTokenText;
using namespace testing::engine_util;

// Holds the output thread inside the first chunk's callback and counts the forwards the step
// thread runs meanwhile. Returns that count (waiting at most `wait`).
int64_t forwards_while_output_is_busy(bool async_scheduling, std::chrono::milliseconds wait) {
  // 2 ms a forward and 240 tokens: the request is still running when its first chunk arrives.
  auto model = std::make_unique<ToyModel>(4096, 2);
  ToyModel* m = model.get();
  EngineConfig c;
  c.max_model_len = 256;
  c.async_scheduling = async_scheduling;
  auto e = LLMEngine::create(std::move(model), c, std::make_shared<ToyTokenText>());
  EXPECT_TRUE(e.is_ok()) << e.status().message();
  std::atomic<int64_t> during{-1};
  std::atomic<bool> done{false};
  auto callback = [&](const CompletionChunk& chunk) {
    if (during.load() >= 0 || chunk.token_ids.empty()) {
      if (chunk.is_final) done = true;
      return;
    }
    const int64_t at = m->forwards();
    const auto until = std::chrono::steady_clock::now() + wait;
    while (m->forwards() < at + 3 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    during = m->forwards() - at;
    if (chunk.is_final) done = true;
  };
  SamplingParams p = greedy(240);
  p.ignore_eos = true;
  auto s = (*e)->submit(prompt_of(10, 3), p, callback);
  EXPECT_TRUE(s.is_ok());
  for (int i = 0; i < 4000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(done.load());
  return during.load();
}

TEST(EngineAsync, NextForwardOverlapsTheOutputOfTheLastStep) {
  // Async (the default): three more forwards run while the first chunk is still being delivered.
  EXPECT_GE(forwards_while_output_is_busy(true, std::chrono::seconds(10)), 3);
  // Synchronous: the step thread waits for the output thread, so no forward runs meanwhile.
  EXPECT_EQ(forwards_while_output_is_busy(false, std::chrono::milliseconds(300)), 0);
}

TEST(EngineAsync, MetricsCountQueuesTokensAndLatencies) {
  EngineConfig c;
  c.max_num_seqs = 1;  // one runs, the others wait
  // 20 ms a forward keeps the first request running for 400 ms: the poll below must see the
  // queue even when a loaded machine leaves this thread unscheduled for a while.
  auto e = make_engine(c, 0, 20);
  const std::vector<std::vector<int32_t>> prompts = {prompt_of(7, 1), prompt_of(19, 2), prompt_of(33, 3)};
  SamplingParams p = greedy(20);
  p.ignore_eos = true;
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const auto& prompt : prompts) streams.push_back(*e->submit(prompt, p));
  bool saw_queue = false;
  for (int i = 0; i < 2000 && !saw_queue; ++i) {
    auto m = nlohmann::json::parse(e->metrics_json());
    saw_queue = m["num_requests_running"] == 1 && m["num_requests_waiting"] == 2 && m["kv_cache_usage"] > 0.0;
    if (!saw_queue) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(saw_queue) << e->metrics_json();
  for (auto& s : streams) EXPECT_EQ(drain(*s)[0].tokens.size(), 20u);
  wait_pool_full(*e);
  auto m = nlohmann::json::parse(e->metrics_json());
  EXPECT_EQ(m["requests_submitted"], 3);
  EXPECT_EQ(m["requests_finished"], 3);
  EXPECT_EQ(m["num_requests_running"], 0);
  EXPECT_EQ(m["num_requests_waiting"], 0);
  EXPECT_EQ(m["prompt_tokens"], 7 + 19 + 33);  // distinct prompts: no prefix hit
  EXPECT_EQ(m["prefix_cache_hits"], 0);
  EXPECT_EQ(m["generation_tokens"], 60);
  EXPECT_EQ(m["time_to_first_token_seconds"]["count"], 3);
  EXPECT_EQ(m["inter_token_latency_seconds"]["count"], 57);
  // Gaps are timed where the output thread delivers, so only their existence is certain.
  EXPECT_GT(m["inter_token_latency_seconds"]["sum"].get<double>(), 0.0);
  EXPECT_GT(m["time_to_first_token_seconds"]["sum"].get<double>(), 0.0);
  EXPECT_GT(m["generation_tokens_per_second"].get<double>(), 0.0);
  EXPECT_EQ(m["kv_cache_usage"], 0.0);
  const std::string prom = e->metrics_prometheus();
  EXPECT_NE(prom.find("\ndeepinfer_prompt_tokens_total 59\n"), std::string::npos) << prom;
  EXPECT_NE(prom.find("\ndeepinfer_generation_tokens_total 60\n"), std::string::npos);
  EXPECT_NE(prom.find("\ndeepinfer_num_requests_waiting 0\n"), std::string::npos);
  EXPECT_NE(prom.find("\ndeepinfer_inter_token_latency_seconds_count 57\n"), std::string::npos);
}

}  // namespace
}  // namespace di::engine
