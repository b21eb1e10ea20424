// What the batch-invariance tests share: a set of requests of mixed lengths (some sharing a
// prefix), schedules that run them alone, all in one batch, in shuffled mixed batches and in
// small prefill chunks, and a runner that plays a schedule through a model with one device cache
// per request, collecting every position's logits row (or its seeded device draw).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/sample/sample_spec.h"
#include "engine/sample/sampler.h"
#include "tests/cuda/device_model_util.h"

namespace di::test {

struct InvRequest {
  std::vector<int32_t> ids;  // prompt then the teacher-forced continuation
  int32_t prompt = 0;        // the first step's share; the rest come one token a step
};

// 32 requests: prompt lengths spread over [1, max_prompt], 1..9 decode tokens, every fourth
// reusing the first tokens of request 1 (a shared prefix), tokens from `seed`.
inline std::vector<InvRequest> mixed_requests(int64_t vocab, int32_t max_prompt, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(vocab - 1));
  std::vector<InvRequest> out(32);
  for (int i = 0; i < 32; ++i) {
    InvRequest& r = out[i];
    r.prompt = 1 + (i * 37) % max_prompt;
    const int32_t total = r.prompt + 1 + i % 9;
    for (int32_t k = 0; k < total; ++k) r.ids.push_back(tok(rng));
    if (i % 4 == 3) {
      const int32_t shared = std::min<int32_t>(r.prompt, static_cast<int32_t>(out[1].ids.size()));
      std::copy(out[1].ids.begin(), out[1].ids.begin() + shared, r.ids.begin());
    }
  }
  return out;
}

// A step: (request, new tokens) pairs; a schedule: its steps in order.
using InvStep = std::vector<std::pair<int32_t, int32_t>>;
using InvSchedule = std::vector<InvStep>;

// Each request alone: its prompt in one forward, then a forward per token.
inline InvSchedule schedule_alone(const std::vector<InvRequest>& reqs) {
  InvSchedule s;
  for (int32_t i = 0; i < static_cast<int32_t>(reqs.size()); ++i) {
    s.push_back({{i, reqs[i].prompt}});
    for (size_t p = reqs[i].prompt; p < reqs[i].ids.size(); ++p) s.push_back({{i, 1}});
  }
  return s;
}

// Steps over every unfinished request at once; a request's next share is `chunk(request, pos)`.
template <typename Chunk>
inline InvSchedule schedule_together(const std::vector<InvRequest>& reqs, const std::vector<int32_t>& order,
                                     Chunk chunk) {
  std::vector<int32_t> pos(reqs.size(), 0);
  InvSchedule s;
  for (;;) {
    InvStep step;
    for (int32_t i : order) {
      const int32_t left = static_cast<int32_t>(reqs[i].ids.size()) - pos[i];
      if (left <= 0) continue;
      const int32_t n = std::clamp(chunk(i, pos[i]), 1, left);
      step.push_back({i, n});
      pos[i] += n;
    }
    if (step.empty()) return s;
    s.push_back(std::move(step));
  }
}

// All 32 in one batch: every prompt in one forward, then each decode step batched.
inline InvSchedule schedule_one_batch(const std::vector<InvRequest>& reqs) {
  std::vector<int32_t> order(reqs.size());
  std::iota(order.begin(), order.end(), 0);
  return schedule_together(reqs, order, [&](int32_t i, int32_t p) { return p == 0 ? reqs[i].prompt : 1; });
}

// Prompts in chunks of 1, 3 and 7 tokens (cycled), all requests in every step.
inline InvSchedule schedule_chunked(const std::vector<InvRequest>& reqs) {
  std::vector<int32_t> order(reqs.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int32_t> step_of(reqs.size(), 0);
  return schedule_together(reqs, order, [&](int32_t i, int32_t p) {
    static constexpr int32_t kChunks[] = {1, 3, 7};
    if (p >= reqs[i].prompt) return 1;
    return std::min(kChunks[step_of[i]++ % 3], reqs[i].prompt - p);
  });
}

// Shuffled: each step a random subset of the unfinished requests in random order, each with a
// random share (1..17 tokens, prompt and continuation alike), from `seed`.
inline InvSchedule schedule_shuffled(const std::vector<InvRequest>& reqs, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> pos(reqs.size(), 0);
  InvSchedule s;
  for (;;) {
    std::vector<int32_t> open;
    for (int32_t i = 0; i < static_cast<int32_t>(reqs.size()); ++i)
      if (pos[i] < static_cast<int32_t>(reqs[i].ids.size())) open.push_back(i);
    if (open.empty()) return s;
    std::shuffle(open.begin(), open.end(), rng);
    const size_t take = 1 + rng() % open.size();
    InvStep step;
    for (size_t k = 0; k < take; ++k) {
      const int32_t i = open[k], left = static_cast<int32_t>(reqs[i].ids.size()) - pos[i];
      const int32_t n = std::min<int32_t>(left, 1 + static_cast<int32_t>(rng() % 17));
      step.push_back({i, n});
      pos[i] += n;
    }
    s.push_back(std::move(step));
  }
}

// What a schedule produced, per request and position: logits rows, or seeded draws.
struct InvResult {
  std::vector<std::vector<float>> logits;                  // [request][position * vocab]
  std::vector<std::vector<engine::SampledToken>> draws;     // [request][step that ended at a position]
  std::vector<std::vector<int64_t>> draw_pos;               // the position each draw follows
  bool ok = false;
};

// Plays `s` through `model` with fresh device caches: with a `temperature` >= 0, a device draw
// (top-p 0.95, logprobs, the RNG keyed by request and position; 0: greedy) after each step of
// each request; else every position's logits row.
inline InvResult run_schedule(engine::Model& model, const std::vector<InvRequest>& reqs, const InvSchedule& s,
                              double temperature = -1) {
  const bool sample = temperature >= 0;
  InvResult r;
  const int64_t V = model.info().vocab_size;
  std::vector<std::unique_ptr<engine::SequenceCache>> caches;
  for (const InvRequest& q : reqs) {
    caches.push_back(device_cache(model, static_cast<int64_t>(q.ids.size())));
    if (!caches.back()) return r;
  }
  r.logits.resize(reqs.size());
  r.draws.resize(reqs.size());
  r.draw_pos.resize(reqs.size());
  std::vector<int64_t> pos(reqs.size(), 0);
  std::vector<float> logits;
  std::vector<Result<engine::SampledToken>> drawn;
  for (const InvStep& step : s) {
    engine::ForwardBatch batch;
    std::vector<engine::SampleSpec> specs;
    int32_t row = 0;
    for (const auto& [i, n] : step) {
      batch.seqs.push_back({reqs[i].ids.data() + pos[i], n, pos[i], caches[i].get(), !sample});
      if (sample) {
        engine::SampleSpec spec;
        spec.row = row++;
        spec.temperature = temperature;
        spec.top_p = 0.95;
        spec.seed = 1000 + static_cast<uint64_t>(i);
        spec.position = static_cast<uint64_t>(pos[i] + n);
        spec.logprobs = true;
        spec.top_logprobs = 3;
        specs.push_back(std::move(spec));
      }
    }
    Status st = sample ? model.forward_sample(batch, specs, drawn) : model.forward(batch, logits);
    EXPECT_TRUE(st.is_ok()) << st.message();
    if (!st.is_ok()) return r;
    int64_t at = 0;
    size_t k = 0;
    for (const auto& [i, n] : step) {
      if (sample) {
        EXPECT_TRUE(drawn[k].is_ok()) << drawn[k].status().message();
        if (!drawn[k].is_ok()) return r;
        r.draws[i].push_back(*drawn[k]);
        r.draw_pos[i].push_back(pos[i] + n);
        ++k;
      } else {
        r.logits[i].insert(r.logits[i].end(), logits.begin() + at * V, logits.begin() + (at + n) * V);
        at += n;
      }
      pos[i] += n;
    }
  }
  r.ok = true;
  return r;
}

// Logits rows (by request and position) whose bits differ between a and b; the first in *where.
inline int64_t differing_rows(const InvResult& a, const InvResult& b, int64_t vocab, std::string* where) {
  int64_t bad = 0;
  for (size_t i = 0; i < a.logits.size(); ++i) {
    const size_t rows = a.logits[i].size() / vocab;
    if (b.logits[i].size() != a.logits[i].size()) {
      bad += static_cast<int64_t>(rows);
      continue;
    }
    for (size_t p = 0; p < rows; ++p) {
      if (std::memcmp(a.logits[i].data() + p * vocab, b.logits[i].data() + p * vocab, vocab * 4) == 0) continue;
      if (bad++ == 0 && where) {
        float worst = 0;
        for (int64_t v = 0; v < vocab; ++v)
          worst = std::max(worst, std::abs(a.logits[i][p * vocab + v] - b.logits[i][p * vocab + v]));
        *where = "request " + std::to_string(i) + " position " + std::to_string(p) + " (max |d| " +
                 std::to_string(worst) + ")";
      }
    }
  }
  return bad;
}

// The draws of b that differ from a's draw after the same position (token, logprob bits or top
// logprobs); positions only one schedule drew after are not compared.
inline int64_t differing_draws(const InvResult& a, const InvResult& b, std::string* where, int64_t* compared) {
  int64_t bad = 0;
  for (size_t i = 0; i < a.draws.size(); ++i) {
    for (size_t k = 0; k < b.draws[i].size(); ++k) {
      const auto it = std::find(a.draw_pos[i].begin(), a.draw_pos[i].end(), b.draw_pos[i][k]);
      if (it == a.draw_pos[i].end()) continue;
      ++*compared;
      const engine::SampledToken& x = a.draws[i][it - a.draw_pos[i].begin()];
      const engine::SampledToken& y = b.draws[i][k];
      const bool same = x.token == y.token && std::memcmp(&x.logprob, &y.logprob, 4) == 0 &&
                        x.top_logprobs == y.top_logprobs;
      if (!same && bad++ == 0 && where)
        *where = "request " + std::to_string(i) + " after position " + std::to_string(b.draw_pos[i][k]) + ": token " +
                 std::to_string(x.token) + " vs " + std::to_string(y.token);
    }
  }
  return bad;
}

}  // namespace di::test
