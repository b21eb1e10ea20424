// The engine through the C ABI on DeepSeek-V4 fixtures whose greedy continuations come from
// transformers: greedy equals transformers; 16 mixed-length requests give the same tokens batched
// as alone (greedy, and seeded sampling in deterministic mode); a small KV budget preempts and
// still matches; prefix-cache hits are reported and change nothing; cancel returns every block;
// bad inputs are clear errors.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <thread>

#include "tests/capi_engine/capi_engine_fixture.h"

namespace di_test {
namespace {

std::vector<std::vector<int32_t>> mixed_prompts(const V4Fixture& f) {
  std::vector<std::vector<int32_t>> ps;
  for (int i = 0; i < 16; ++i) {
    const size_t len = 3 + (static_cast<size_t>(i) * 11) % (f.prompt.size() - 3);
    std::vector<int32_t> p;
    for (size_t k = 0; k < len; ++k) p.push_back(f.prompt[(k + static_cast<size_t>(i) * 5) % f.prompt.size()]);
    ps.push_back(p);
  }
  return ps;
}

std::vector<Completion> run_all(di_engine* e, const std::vector<std::vector<int32_t>>& prompts,
                                const std::function<std::string(int)>& sampling) {
  std::vector<Request> reqs;
  for (size_t i = 0; i < prompts.size(); ++i) reqs.push_back(submit(e, prompts[i], sampling(static_cast<int>(i))));
  std::vector<Completion> out;
  for (auto& r : reqs) out.push_back(drain(r.get())[0]);
  return out;
}

void wait_pool_full(di_engine* e) {
  nlohmann::json m;
  for (int i = 0; i < 1000; ++i) {
    m = metrics(e);
    if (m["kv_blocks_free"] == m["kv_blocks_total"] && m["num_requests_running"] == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(m["kv_blocks_free"], m["kv_blocks_total"]);
}

TEST(CapiEngine, GreedyEqualsTransformersOnEveryV4Fixture) {
  for (const char* name : {"mixed_yarn_hc2", "hca_csa_hc3_clip", "odd_rates_hc4", "real_rates_long"}) {
    V4Fixture f = load_v4_fixture(name);
    Engine e = engine(f.dir, R"({"max_num_batched_tokens": 64, "max_num_seqs": 4})");
    Request r = submit(e.get(), f.prompt,
                       R"({"temperature": 0, "ignore_eos": 1, "max_tokens": )" + std::to_string(f.greedy.size()) + "}");
    auto out = drain(r.get());
    EXPECT_EQ(out[0].tokens, f.greedy) << name;
    EXPECT_EQ(out[0].finish, DI_FINISH_LENGTH);
  }
}

TEST(CapiEngine, SixteenMixedRequestsBatchedEqualAlone) {
  V4Fixture f = load_v4_fixture("odd_rates_hc4");
  const std::string cfg = R"({"max_model_len": 256, "max_num_batched_tokens": 24, "block_size": 8})";
  auto prompts = mixed_prompts(f);
  auto greedy = [](int) { return std::string(R"({"temperature": 0, "ignore_eos": 1, "max_tokens": 12})"); };
  Engine batched_engine = engine(f.dir, cfg);
  auto batched = run_all(batched_engine.get(), prompts, greedy);
  for (size_t i = 0; i < prompts.size(); ++i) {
    Engine alone = engine(f.dir, cfg);
    EXPECT_EQ(batched[i].tokens, run_all(alone.get(), {prompts[i]}, greedy)[0].tokens) << i;
    EXPECT_EQ(batched[i].tokens.size(), 12u);
  }
}

TEST(CapiEngine, SeededSamplingInDeterministicModeIsBatchInvariant) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  const std::string cfg = R"({"max_model_len": 256, "max_num_batched_tokens": 16, "deterministic": 1})";
  auto prompts = mixed_prompts(f);
  auto sampled = [](int i) {
    return R"({"temperature": 0.9, "top_p": 0.95, "top_k": 50, "ignore_eos": 1, "max_tokens": 10, "seed": )" +
           std::to_string(100 + i) + "}";
  };
  Engine batched_engine = engine(f.dir, cfg);
  auto batched = run_all(batched_engine.get(), prompts, sampled);
  for (size_t i = 0; i < prompts.size(); ++i) {
    Engine alone = engine(f.dir, cfg);
    EXPECT_EQ(batched[i].tokens, run_all(alone.get(), {prompts[i]}, [&](int) { return sampled(static_cast<int>(i)); })[0].tokens) << i;
  }
}

TEST(CapiEngine, SmallKvBudgetPreemptsAndCompletesWithTheSameTokens) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine probe = engine(f.dir, R"({"max_model_len": 128, "max_num_seqs": 8})");
  nlohmann::json info = engine_info(probe.get());
  const int64_t block = info["limits"]["kv_block_bytes"], slot = info["limits"]["kv_slot_bytes"];
  // 16 slots (8 running + 8 checkpoints) and blocks for ~1.5 full-length sequences.
  const int64_t bytes = 16 * slot + 12 * block;
  const std::string small = R"({"max_model_len": 128, "max_num_seqs": 8, "kv_cache_bytes": )" + std::to_string(bytes) + "}";
  auto prompts = mixed_prompts(f);
  auto greedy = [](int) { return std::string(R"({"temperature": 0, "ignore_eos": 1, "max_tokens": 40})"); };
  Engine e = engine(f.dir, small);
  auto out = run_all(e.get(), prompts, greedy);
  EXPECT_GT(metrics(e.get())["num_preemptions"].get<int64_t>(), 0);
  Engine roomy = engine(f.dir, R"({"max_model_len": 128, "max_num_seqs": 8})");
  auto ref = run_all(roomy.get(), prompts, greedy);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(out[i].tokens, ref[i].tokens) << i;
    EXPECT_EQ(out[i].finish, DI_FINISH_LENGTH);
  }
  wait_pool_full(e.get());
}

TEST(CapiEngine, PrefixCacheHitsAreReportedAndChangeNoOutput) {
  V4Fixture f = load_v4_fixture("hca_csa_hc3_clip");
  std::vector<std::vector<int32_t>> followups;
  for (int i = 0; i < 4; ++i) {
    auto p = f.prompt;
    for (int k = 0; k <= i * 3; ++k) p.push_back(f.prompt[(static_cast<size_t>(k) * 7 + static_cast<size_t>(i)) % f.prompt.size()]);
    followups.push_back(p);
  }
  auto greedy = [](int) { return std::string(R"({"temperature": 0, "ignore_eos": 1, "max_tokens": 8})"); };
  Engine on = engine(f.dir, R"({"max_model_len": 256, "block_size": 8})");
  Engine off = engine(f.dir, R"({"max_model_len": 256, "block_size": 8, "enable_prefix_caching": 0})");
  run_all(on.get(), {f.prompt}, greedy);
  auto hit = run_all(on.get(), followups, greedy);
  auto miss = run_all(off.get(), followups, greedy);
  int64_t hits = 0;
  for (size_t i = 0; i < followups.size(); ++i) {
    EXPECT_EQ(hit[i].tokens, miss[i].tokens) << i;
    EXPECT_GT(hit[i].cached, 0) << i;
    EXPECT_EQ(hit[i].cached % 8, 0);
    EXPECT_EQ(miss[i].cached, 0);
    hits += hit[i].cached;
  }
  nlohmann::json m = metrics(on.get());
  EXPECT_EQ(m["prefix_cache_hits"].get<int64_t>(), hits);
  EXPECT_GT(m["prefix_cache_hit_rate"].get<double>(), 0.0);
}

TEST(CapiEngine, CancelDuringPrefillAndDuringDecodeReturnsEveryBlock) {
  V4Fixture f = load_v4_fixture("real_rates_long");  // a 300-token prompt
  Engine e = engine(f.dir, R"({"max_model_len": 1024, "max_num_batched_tokens": 2})");
  Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "max_tokens": 4})");
  ASSERT_EQ(di_cancel(r.get(), nullptr), DI_OK);
  auto out = drain(r.get());
  EXPECT_EQ(out[0].finish, DI_FINISH_CANCELLED);
  EXPECT_TRUE(out[0].tokens.empty());
  wait_pool_full(e.get());

  // During decode: the callback cancels at the first token; 500 more could follow.
  struct State {
    std::atomic<int> tokens{0};
    std::atomic<int> finish{-1};
    std::atomic<bool> final{false};
    di_request* req = nullptr;
    std::atomic<bool> ready{false};
  } st;
  auto cb = [](const di_chunk* c, void* user) {
    auto* s = static_cast<State*>(user);
    s->tokens += static_cast<int>(c->num_tokens);
    while (!s->ready) std::this_thread::yield();
    if (c->num_tokens > 0) di_cancel(s->req, nullptr);
    if (c->finish_reason != DI_FINISH_NONE) s->finish = c->finish_reason;
    if (c->is_final) s->final = true;
  };
  Options o = options(R"({"temperature": 0, "ignore_eos": 1, "max_tokens": 500})");
  di_request* raw = nullptr;
  std::vector<int32_t> prompt(f.prompt.begin(), f.prompt.begin() + 20);
  ASSERT_EQ(di_submit(e.get(), prompt.data(), prompt.size(), o.get(), cb, &st, &raw, nullptr), DI_OK);
  st.req = raw;
  st.ready = true;
  for (int i = 0; i < 2000 && !st.final; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(st.final);
  EXPECT_EQ(st.finish.load(), DI_FINISH_CANCELLED);
  EXPECT_LT(st.tokens.load(), 500);
  di_chunk c;
  c.struct_size = sizeof c;
  EXPECT_EQ(di_poll_chunk(raw, 0, &c, nullptr), DI_E_STATE);  // callback requests are not polled
  di_request_destroy(raw);
  wait_pool_full(e.get());
}

// Logprobs through di_chunk against transformers: each greedy token's logprob is log-softmax of
// the fixture's logits row that predicted it, and top_logprobs hold the row's best values.
TEST(CapiEngine, LogprobsAndTopLogprobsEqualTransformersLogSoftmax) {
  for (const char* name : {"mixed_yarn_hc2", "odd_rates_hc4"}) {
    V4Fixture f = load_v4_fixture(name);
    const size_t vocab = 512, rows = f.prompt.size() + f.greedy.size();
    std::vector<float> logits(rows * vocab);
    std::ifstream in(f.dir + "/logits.f32", std::ios::binary);
    ASSERT_TRUE(in.read(reinterpret_cast<char*>(logits.data()), static_cast<std::streamsize>(logits.size() * 4))) << name;
    Engine e = engine(f.dir, R"({"max_model_len": 256})");
    Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "ignore_eos": 1, "logprobs": 1, "top_logprobs": 5, "max_tokens": )" +
                                              std::to_string(f.greedy.size()) + "}");
    std::vector<int32_t> tokens;
    std::vector<float> lps, top_lps;
    std::vector<int32_t> top_ids;
    for (;;) {
      di_chunk c;
      c.struct_size = sizeof c;
      const di_status st = di_poll_chunk(r.get(), 60000, &c, nullptr);
      if (st == DI_END_OF_STREAM) break;
      ASSERT_EQ(st, DI_OK);
      if (c.num_tokens == 0) continue;
      ASSERT_NE(c.logprobs, nullptr);
      ASSERT_EQ(c.num_top_logprobs, 5u);
      tokens.insert(tokens.end(), c.token_ids, c.token_ids + c.num_tokens);
      lps.insert(lps.end(), c.logprobs, c.logprobs + c.num_tokens);
      top_ids.insert(top_ids.end(), c.top_logprob_ids, c.top_logprob_ids + c.num_tokens * 5);
      top_lps.insert(top_lps.end(), c.top_logprobs, c.top_logprobs + c.num_tokens * 5);
    }
    ASSERT_EQ(tokens, f.greedy) << name;
    for (size_t k = 0; k < tokens.size(); ++k) {
      const float* row = logits.data() + (f.prompt.size() - 1 + k) * vocab;
      const float mx = *std::max_element(row, row + vocab);
      double z = 0;
      for (size_t v = 0; v < vocab; ++v) z += std::exp(static_cast<double>(row[v] - mx));
      auto lsm = [&](int32_t t) { return static_cast<double>(row[t] - mx) - std::log(z); };
      std::vector<double> sorted;
      for (size_t v = 0; v < vocab; ++v) sorted.push_back(lsm(static_cast<int32_t>(v)));
      std::sort(sorted.rbegin(), sorted.rend());
      EXPECT_NEAR(lps[k], lsm(tokens[k]), 1e-3) << name << " " << k;
      EXPECT_EQ(top_ids[k * 5], tokens[k]) << name << " " << k;  // greedy: the best is the token
      for (size_t i = 0; i < 5; ++i) {
        // The i-th best value, and the value transformers gives the id reported there.
        EXPECT_NEAR(top_lps[k * 5 + i], sorted[i], 1e-3) << name << " " << k << " " << i;
        EXPECT_NEAR(top_lps[k * 5 + i], lsm(top_ids[k * 5 + i]), 1e-3) << name << " " << k << " " << i;
      }
    }
  }
  // Without logprobs asked for, a chunk carries none.
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 256})");
  Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "max_tokens": 2})");
  di_chunk c;
  c.struct_size = sizeof c;
  ASSERT_EQ(di_poll_chunk(r.get(), 60000, &c, nullptr), DI_OK);
  EXPECT_EQ(c.logprobs, nullptr);
  EXPECT_EQ(c.num_top_logprobs, 0u);
  EXPECT_EQ(c.top_logprob_ids, nullptr);
}

TEST(CapiEngine, NGreaterThanOneGreedyGivesNCopiesOfTransformersGreedy) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 256})");
  Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "ignore_eos": 1, "n": 3, "max_tokens": )" +
                                            std::to_string(f.greedy.size()) + "}");
  auto out = drain(r.get(), 3);
  for (const Completion& c : out) EXPECT_EQ(c.tokens, f.greedy);
}

TEST(CapiEngine, BadInputsAreClearErrors) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 256})");
  auto expect = [&](const std::vector<int32_t>& ids, const std::string& sampling, di_status code, const std::string& needle) {
    Options o = options(sampling);
    di_request* r = nullptr;
    di_error* err = nullptr;
    EXPECT_EQ(di_submit(e.get(), ids.data(), ids.size(), o.get(), nullptr, nullptr, &r, &err), code) << needle;
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(std::string(di_error_message(err)).find(needle), std::string::npos) << di_error_message(err);
    di_error_destroy(err);
  };
  expect({}, "{}", DI_E_INVALID_ARG, "prompt");
  expect({1, 512}, "{}", DI_E_INVALID_ARG, "prompt[1]");
  expect({1}, R"({"max_tokens": 0})", DI_E_INVALID_ARG, "max_tokens");
  expect({1}, R"({"temperature": -1})", DI_E_INVALID_ARG, "temperature");
  expect({1}, R"({"top_p": 0})", DI_E_INVALID_ARG, "top_p");
  expect({1}, R"({"top_p": 1.5})", DI_E_INVALID_ARG, "top_p");
  expect({1}, R"({"stop_token_ids": [9999]})", DI_E_INVALID_ARG, "stop_token_ids[0]");
  expect({1}, R"({"max_tokens": 1000})", DI_E_LIMIT, "max_model_len");
  expect({1}, R"({"max_tokens": 9223372036854775807})", DI_E_LIMIT, "max_model_len");
  expect({1}, R"({"n": 0})", DI_E_INVALID_ARG, "n");
  expect({1}, R"({"top_k": -2})", DI_E_INVALID_ARG, "top_k");
  expect({1}, R"({"min_p": 1.5})", DI_E_INVALID_ARG, "min_p");
  expect({1}, R"({"repetition_penalty": 0})", DI_E_INVALID_ARG, "repetition_penalty");
  expect({1}, R"({"presence_penalty": 2.5})", DI_E_INVALID_ARG, "presence_penalty");
  expect({1}, R"({"frequency_penalty": -3})", DI_E_INVALID_ARG, "frequency_penalty");
  expect({1}, R"({"logit_bias": {"512": 1}})", DI_E_INVALID_ARG, "logit_bias");
  expect({1}, R"({"logit_bias": {"5": 1e300}})", DI_E_INVALID_ARG, "logit_bias[5]");
  expect({1}, R"({"top_logprobs": 21})", DI_E_INVALID_ARG, "top_logprobs");
  expect({1}, R"({"min_tokens": 5, "max_tokens": 2})", DI_E_INVALID_ARG, "min_tokens");
  expect({1}, R"({"n": 1000})", DI_E_INVALID_ARG, "n");
  expect({1}, R"({"stop": ["x"]})", DI_E_INVALID_ARG, "stop");  // no tokenizer.json in the fixture

  di_options* o = nullptr;
  di_options_create(&o, nullptr);
  di_error* err = nullptr;
  EXPECT_EQ(di_options_set_f64(o, "temperature", std::nan(""), &err), DI_E_INVALID_ARG);
  di_error_destroy(err);
  err = nullptr;
  EXPECT_EQ(di_options_set_i64(o, "no_such_option", 1, &err), DI_E_UNSUPPORTED);
  EXPECT_NE(std::string(di_error_message(err)).find("no_such_option"), std::string::npos);
  di_error_destroy(err);
  err = nullptr;
  ASSERT_EQ(di_options_set_i64(o, "block_size", 8, nullptr), DI_OK);  // an engine key
  di_request* r = nullptr;
  int32_t id = 1;
  EXPECT_EQ(di_submit(e.get(), &id, 1, o, nullptr, nullptr, &r, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("block_size"), std::string::npos);
  di_error_destroy(err);
  di_options_destroy(o);

  EXPECT_EQ(di_submit(nullptr, &id, 1, nullptr, nullptr, nullptr, &r, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_poll_chunk(nullptr, 0, nullptr, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_cancel(nullptr, nullptr), DI_E_INVALID_ARG);
  di_request_destroy(nullptr);
  di_engine_destroy(nullptr);

  di_engine* bad = nullptr;
  err = nullptr;
  const std::string missing = f.dir + "/no-such-dir";
  EXPECT_NE(di_engine_create(missing.data(), missing.size(), nullptr, &bad, &err), DI_OK);
  EXPECT_EQ(bad, nullptr);
  di_error_destroy(err);
  // A huge max_num_seqs is refused at once (it used to size billions of slots first: minutes).
  Options many = options(R"({"max_num_seqs": 1000000000, "max_model_len": 256})");
  err = nullptr;
  EXPECT_EQ(di_engine_create(f.dir.data(), f.dir.size(), many.get(), &bad, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("max_num_seqs"), std::string::npos) << di_error_message(err);
  di_error_destroy(err);
  Options tiny_kv = options(R"({"kv_cache_bytes": 1000, "max_model_len": 256})");
  err = nullptr;
  EXPECT_EQ(di_engine_create(f.dir.data(), f.dir.size(), tiny_kv.get(), &bad, &err), DI_E_LIMIT);
  EXPECT_NE(std::string(di_error_message(err)).find("kv_cache_bytes"), std::string::npos);
  di_error_destroy(err);
}

// The CPU models have no batch-invariant kernels: deterministic mode runs each sequence alone.
TEST(CapiEngine, InfoSaysHowDeterministicModeIsBatchInvariant) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 200, "deterministic": 1})");
  nlohmann::json info = engine_info(e.get());
  EXPECT_EQ(info["deterministic"], true);
  EXPECT_EQ(info["batch_invariant"], true);
  EXPECT_EQ(info["batch_invariance"], "per_sequence");
}

TEST(CapiEngine, InfoAndMetricsDescribeTheEngine) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 200, "max_num_seqs": 5})");
  nlohmann::json info = engine_info(e.get());
  EXPECT_EQ(info["model"]["family"], "deepseek_v4");
  EXPECT_EQ(info["model"]["vocab_size"], 512);
  EXPECT_EQ(info["limits"]["max_model_len"], 200);
  EXPECT_EQ(info["limits"]["max_num_seqs"], 5);
  EXPECT_EQ(info["device"], "cpu");
  EXPECT_EQ(info["batch_invariant"], false);
  EXPECT_EQ(info["batch_invariance"], "off");
  Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "max_tokens": 3})");
  drain(r.get());
  nlohmann::json m = metrics(e.get());
  EXPECT_EQ(m["generation_tokens"], 3);
  EXPECT_EQ(m["time_to_first_token_seconds"]["count"], 1);
  EXPECT_EQ(m["inter_token_latency_seconds"]["count"], 2);
  char* text = nullptr;
  ASSERT_EQ(di_engine_metrics(e.get(), 1, &text, nullptr, nullptr), DI_OK);
  const std::string prom(text);
  di_free(text);
  EXPECT_NE(prom.find("# TYPE deepinfer_generation_tokens_total counter\ndeepinfer_generation_tokens_total 3\n"), std::string::npos);
  EXPECT_EQ(di_engine_metrics(e.get(), 7, &text, nullptr, nullptr), DI_E_INVALID_ARG);
}

// Where the time goes, on a real model: after N tokens every step has each phase recorded once,
// the phases tile the steps, and the forward fits inside the busy wall time. No timing bounds.
TEST(CapiEngine, StepBreakdownIsConsistentAfterGenerating) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 200})");
  Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "max_tokens": 6, "ignore_eos": true})");
  drain(r.get());
  // A second request: once its tokens are out, every step of the first has recorded its timing
  // (a step records before the next one is scheduled).
  Request r2 = submit(e.get(), f.prompt, R"({"temperature": 0, "max_tokens": 1})");
  drain(r2.get());
  nlohmann::json m = metrics(e.get());
  const int64_t steps = m["steps"].get<int64_t>();
  EXPECT_GE(steps, 6);  // six tokens of one completion need six steps
  double sum = 0;
  for (const char* p : {"schedule", "prepare", "forward", "sample", "output"}) {
    EXPECT_EQ(m["step_phases"][p]["count"], steps) << p;
    EXPECT_GE(m["step_phases"][p]["seconds"].get<double>(), 0.0) << p;
    sum += m["step_phases"][p]["seconds"].get<double>();
  }
  EXPECT_EQ(m["step_time_seconds"]["count"], steps);
  EXPECT_NEAR(sum, m["step_time_seconds"]["sum"].get<double>(), 1e-6 * static_cast<double>(steps));
  const double forward = m["step_phases"]["forward"]["seconds"].get<double>();
  EXPECT_GT(forward, 0.0);
  EXPECT_EQ(m["busy_forward_seconds"].get<double>(), forward);
  EXPECT_LE(forward, m["busy_wall_seconds"].get<double>());
  EXPECT_GT(m["busy_ratio"].get<double>(), 0.0);
  EXPECT_LE(m["busy_ratio"].get<double>(), 1.0);
  EXPECT_GE(m["output_thread"]["count"].get<int64_t>(), 1);
  char* text = nullptr;
  ASSERT_EQ(di_engine_metrics(e.get(), 1, &text, nullptr, nullptr), DI_OK);
  const std::string prom(text);
  di_free(text);
  for (const char* series : {"deepinfer_steps_total ", "deepinfer_step_phase_seconds_total{phase=\"forward\"} ",
                             "deepinfer_step_phase_steps_total{phase=\"output\"} ", "deepinfer_step_time_seconds_count ",
                             "deepinfer_busy_forward_seconds_total ", "deepinfer_busy_wall_seconds_total ",
                             "deepinfer_busy_ratio ", "deepinfer_output_thread_seconds_total "})
    EXPECT_NE(prom.find(std::string("\n") + series), std::string::npos) << series;
}

}  // namespace
}  // namespace di_test
