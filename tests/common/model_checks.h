// The checks every model family must pass against its transformers fixture, written once so
// that each family (and each device) runs the same ones: full-sequence logits, greedy
// continuation, prefill + decode, and independence from how the prefill is chunked.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/kv/cache_layout.h"
#include "engine/llm.h"
#include "tests/common/model_fixture.h"

namespace di::test {

// A suite whose every test runs the CPU model of its parameter's fixture: SetUp loads both
// (`load` turns the parameter into a Fixture), so a failed load fails the test before its body,
// and the body finds them in `f` and `model`.
template <typename Param, Fixture (*load)(const Param&), int32_t kThreads>
class CpuFixtureTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    f = load(this->GetParam());
    engine::ModelOptions opts;
    opts.num_threads = kThreads;
    auto m = engine::load_model(f.dir, opts);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    model = std::move(m).value();
  }

  Fixture f;
  std::unique_ptr<engine::Model> model;
};

constexpr double kFixtureTolerance = 1e-4;  // max|Δlogit| / max|logit|, per position
constexpr double kSelfTolerance = 1e-5;     // the same model computed two ways

// Every position's logits over the whole sequence in one forward; returns the worst error.
inline double expect_full_sequence_matches(engine::Model& model, const Fixture& f, const std::string& label) {
  const std::vector<float> got = run_chunks(model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  EXPECT_EQ(got.size(), f.logits.size());
  if (got.size() != f.logits.size()) return 1.0;
  double worst = 0;
  for (size_t r = 0; r < f.all_ids.size(); ++r) {
    const double err = row_rel_err(got.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab);
    worst = std::max(worst, err);
    EXPECT_LE(err, kFixtureTolerance) << "position " << r;
  }
  std::printf("%s: worst max|Δ|/max|logit| = %.3g over %zu positions\n", label.c_str(), worst, f.all_ids.size());
  return worst;
}

// Prefill the prompt, then decode greedily one token per forward through `cache` (room for
// f.all_ids); the tokens chosen.
inline std::vector<int32_t> greedy_continuation(engine::Model& model, const Fixture& f, engine::SequenceCache& cache) {
  std::vector<int32_t> ids = f.prompt;
  std::vector<float> logits;
  engine::ForwardBatch prefill;
  prefill.seqs.push_back({ids.data(), static_cast<int32_t>(ids.size()), 0, &cache, false});
  Status st = model.forward(prefill, logits);
  EXPECT_TRUE(st.is_ok()) << st.message();
  std::vector<int32_t> generated;
  while (st.is_ok() && generated.size() < f.greedy.size()) {
    EXPECT_EQ(static_cast<int64_t>(logits.size()), f.vocab);
    if (static_cast<int64_t>(logits.size()) != f.vocab) break;
    generated.push_back(argmax(logits.data(), f.vocab));
    ids.push_back(generated.back());
    if (generated.size() == f.greedy.size()) break;
    engine::ForwardBatch step;
    step.seqs.push_back({&ids.back(), 1, static_cast<int64_t>(ids.size() - 1), &cache, false});
    st = model.forward(step, logits);
    EXPECT_TRUE(st.is_ok()) << st.message();
  }
  return generated;
}

// The same through a host cache.
inline std::vector<int32_t> greedy_continuation(engine::Model& model, const Fixture& f) {
  engine::ContiguousSequenceCache cache(model.cache_groups(), static_cast<int64_t>(f.all_ids.size()));
  return greedy_continuation(model, f, cache);
}

// Prompt in one chunk then one token per forward equals one full forward (and the fixture).
inline void expect_prefill_then_decode_equals_full(engine::Model& model, const Fixture& f) {
  const std::vector<float> full = run_chunks(model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  std::vector<int32_t> chunks = {static_cast<int32_t>(f.prompt.size())};
  chunks.insert(chunks.end(), f.greedy.size(), 1);
  const std::vector<float> stepped = run_chunks(model, f.all_ids, chunks);
  ASSERT_EQ(stepped.size(), full.size());
  for (size_t r = 0; r < f.all_ids.size(); ++r) {
    EXPECT_LE(row_rel_err(stepped.data() + r * f.vocab, full.data() + r * f.vocab, f.vocab), kSelfTolerance)
        << "row " << r;
    EXPECT_LE(row_rel_err(stepped.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab), kFixtureTolerance)
        << "row " << r;
  }
}

// Chunked prefills of several shapes (`long_chunk` reaches past a window or compression block)
// each equal one full forward.
inline void expect_any_chunking_equals_one_prefill(engine::Model& model, const Fixture& f, int32_t long_chunk) {
  const std::vector<float> full = run_chunks(model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  for (const std::vector<int32_t>& chunks :
       std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {5, 1, 7}, {13}, {long_chunk, 1}}) {
    const std::vector<float> got = run_chunks(model, f.all_ids, chunks);
    ASSERT_EQ(got.size(), full.size());
    EXPECT_LE(worst_rel_err(got, full, f.vocab), kSelfTolerance) << "chunks starting " << chunks[0];
  }
}

// The fixture's prompt three times through the engine (paged blocks, chunked prefill, mixed
// prefill/decode steps, batching), then once more from the prefix cache: every continuation
// must equal transformers' greedy one.
inline void expect_engine_greedy_matches(const Fixture& f, int64_t kv_cache_bytes, int num_threads) {
  engine::EngineConfig config;
  config.block_size = 16;
  config.max_num_batched_tokens = 24;  // forces chunked prefill and mixed prefill/decode steps
  config.max_num_seqs = 4;
  config.kv_cache_bytes = kv_cache_bytes;
  engine::ModelOptions options;
  options.num_threads = num_threads;
  auto llm = engine::LLM::load(f.dir, config, options);
  ASSERT_TRUE(llm.is_ok()) << llm.status().message();
  EXPECT_EQ((*llm)->engine().info().model.family, f.meta.value("family", (*llm)->engine().info().model.family));
  engine::SamplingParams params;
  params.temperature = 0;
  params.max_tokens = static_cast<int64_t>(f.greedy.size());
  params.ignore_eos = true;
  auto out = (*llm)->generate({f.prompt, f.prompt, f.prompt}, params);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (const auto& r : *out) {
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].token_ids, f.greedy) << "request " << r.request_id << " error " << r.outputs[0].error;
  }
  auto again = (*llm)->generate({f.prompt}, params);
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_GT((*again)[0].num_cached_tokens, 0);
  EXPECT_EQ((*again)[0].outputs[0].token_ids, f.greedy);
}

// Four requests through the engine with room for about one and a half: chunked prefill, mixed steps,
// preemption and the prefix cache's slot checkpoints on `device`; every continuation must be
// transformers' greedy one.
inline void expect_engine_greedy_with_preemption(const Fixture& f, const std::string& device) {
  engine::EngineConfig config;
  config.block_size = 16;
  config.max_num_batched_tokens = 24;
  config.max_num_seqs = 4;
  config.max_model_len = static_cast<int64_t>(f.all_ids.size());
  engine::CacheLayout layout;
  {
    engine::ModelOptions probe_opts;
    probe_opts.device = device;
    auto probe = engine::load_model(f.dir, probe_opts);
    ASSERT_TRUE(probe.is_ok()) << probe.status().message();
    auto l = engine::make_cache_layout((*probe)->cache_groups(), config.block_size);
    ASSERT_TRUE(l.is_ok()) << l.status().message();
    layout = *l;
  }
  config.kv_cache_bytes = layout.slot_bytes * config.max_num_seqs * 2 +
                          layout.block_bytes * (layout.blocks_needed(config.max_model_len) * 3 / 2 + 1);
  engine::ModelOptions options;
  options.device = device;
  options.num_threads = 2;
  auto llm = engine::LLM::load(f.dir, config, options);
  ASSERT_TRUE(llm.is_ok()) << llm.status().message();
  EXPECT_EQ((*llm)->engine().info().model.device, device);
  engine::SamplingParams params;
  params.temperature = 0;
  params.max_tokens = static_cast<int64_t>(f.greedy.size());
  params.ignore_eos = true;
  auto out = (*llm)->generate({f.prompt, f.prompt, f.prompt, f.prompt}, params);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (const auto& r : *out) {
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].token_ids, f.greedy)
        << device << " request " << r.request_id << " error " << r.outputs[0].error;
  }
  const json metrics = json::parse((*llm)->engine().metrics_json());
  std::printf("%s engine on %s: %lld preemptions\n", f.dir.substr(f.dir.rfind('/') + 1).c_str(), device.c_str(),
              static_cast<long long>(metrics.value("num_preemptions", int64_t{0})));
  auto again = (*llm)->generate({f.prompt}, params);
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ((*again)[0].outputs[0].token_ids, f.greedy) << device << " from the prefix cache";
}

// Seeded sampling through the engine on the CPU and on `device`: temperature, top-k, top-p,
// min-p, penalties, logit bias, n = 2 and logprobs, six requests in one batch. Both backends draw
// with the same keyed RNG over the same fixed-point weights, so every token is the same (their
// fp32 logits agree to ~1e-6, far from any draw's boundary) and logprobs agree within 1e-4; on
// `device`, each request alone gives what it gave in the batch.
inline void expect_engine_sampling_same_on_cpu_and(const Fixture& f, const std::string& device) {
  std::vector<engine::SamplingParams> params(6);
  for (size_t i = 0; i < params.size(); ++i) {
    engine::SamplingParams& p = params[i];
    p.max_tokens = static_cast<int64_t>(f.greedy.size());
    p.ignore_eos = true;
    p.seed = 100 + i;
    p.temperature = 0.6 + 0.2 * static_cast<double>(i % 3);
    p.logprobs = true;
    p.top_logprobs = 3;
  }
  params[1].top_k = 20;
  params[2].top_p = 0.9;
  params[3].min_p = 0.05;
  params[3].repetition_penalty = 1.3;
  params[4].presence_penalty = 0.5;
  params[4].frequency_penalty = 0.3;
  params[4].logit_bias = {{f.greedy[0], 2.0f}};
  params[5].n = 2;
  params[5].top_p = 0.95;
  params[5].top_k = 50;
  const std::vector<std::vector<int32_t>> prompts(params.size(), f.prompt);
  auto run = [&](const std::string& dev, const std::vector<std::vector<int32_t>>& ps,
                 const std::vector<engine::SamplingParams>& sp) {
    engine::EngineConfig config;
    config.block_size = 16;
    config.max_num_seqs = 8;
    engine::ModelOptions options;
    options.device = dev;
    options.num_threads = 2;
    auto llm = engine::LLM::load(f.dir, config, options);
    EXPECT_TRUE(llm.is_ok()) << llm.status().message();
    std::vector<engine::RequestOutput> out;
    if (!llm.is_ok()) return out;
    auto r = (*llm)->generate(ps, sp);
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    if (r.is_ok()) out = std::move(r).value();
    return out;
  };
  const auto cpu = run("cpu", prompts, params);
  const auto dev = run(device, prompts, params);
  ASSERT_EQ(cpu.size(), params.size());
  ASSERT_EQ(dev.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_EQ(cpu[i].outputs.size(), dev[i].outputs.size());
    for (size_t c = 0; c < cpu[i].outputs.size(); ++c) {
      const auto& a = cpu[i].outputs[c];
      const auto& b = dev[i].outputs[c];
      EXPECT_EQ(a.token_ids, b.token_ids) << device << " request " << i << " completion " << c << " " << b.error;
      ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
      for (size_t t = 0; t < a.logprobs.size(); ++t) EXPECT_NEAR(a.logprobs[t], b.logprobs[t], 1e-4) << i << " " << t;
    }
  }
  for (size_t i : {size_t{2}, size_t{5}}) {
    const auto alone = run(device, {f.prompt}, {params[i]});
    ASSERT_EQ(alone.size(), 1u);
    for (size_t c = 0; c < alone[0].outputs.size(); ++c)
      EXPECT_EQ(alone[0].outputs[c].token_ids, dev[i].outputs[c].token_ids) << device << " request " << i << " alone";
  }
}

}  // namespace di::test
