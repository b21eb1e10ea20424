// Helpers shared by the LLMEngine tests on ToyModel: engines, prompts, running requests to their
// end, and waiting for the KV pool to be full again. Test code only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "tests/engine/toy_model.h"

namespace di::engine::testing::engine_util {

struct Completion {
  std::vector<int32_t> tokens;
  std::string text;
  FinishReason finish = FinishReason::kNone;
  int64_t cached = 0;
};

inline std::unique_ptr<LLMEngine> make_engine(EngineConfig c = {}, int64_t kv_bytes = 0, int delay_ms = 0) {
  if (c.max_model_len == 0) c.max_model_len = 256;
  if (kv_bytes) c.kv_cache_bytes = kv_bytes;
  auto r = LLMEngine::create(std::make_unique<ToyModel>(4096, delay_ms), c, std::make_shared<ToyTokenText>());
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return std::move(r).value();
}

inline std::vector<Completion> drain(RequestStream& s, int n = 1) {
  std::vector<Completion> out(n);
  CompletionChunk c;
  for (;;) {
    auto r = s.poll(20000, &c);
    if (r == RequestStream::Poll::kEnd) break;
    EXPECT_EQ(r, RequestStream::Poll::kChunk) << "poll timed out";
    if (r != RequestStream::Poll::kChunk) break;
    Completion& o = out[c.index];
    o.tokens.insert(o.tokens.end(), c.token_ids.begin(), c.token_ids.end());
    o.text += c.text;
    o.cached = c.cached_prompt_tokens;
    if (c.finish_reason != FinishReason::kNone) o.finish = c.finish_reason;
  }
  return out;
}

inline std::vector<int32_t> prompt_of(int len, int salt) {
  std::vector<int32_t> p;
  for (int i = 0; i < len; ++i) p.push_back(1 + (i * 7 + salt * 13) % 96);
  return p;
}

inline std::vector<std::vector<int32_t>> mixed_prompts() {
  std::vector<std::vector<int32_t>> ps;
  for (int i = 0; i < 16; ++i) ps.push_back(prompt_of(3 + (i * 11) % 45, i));
  return ps;
}

inline std::vector<Completion> run_batch(LLMEngine& e, const std::vector<std::vector<int32_t>>& prompts,
                                  const std::function<SamplingParams(int)>& params) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto r = e.submit(prompts[i], params(static_cast<int>(i)));
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    streams.push_back(*r);
  }
  std::vector<Completion> out;
  for (auto& s : streams) out.push_back(drain(*s)[0]);
  return out;
}

inline SamplingParams greedy(int max_tokens = 12) {
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  return p;
}

inline void wait_pool_full(LLMEngine& e) {
  for (int i = 0; i < 500; ++i) {
    KvCacheStats s = e.kv_stats();
    if (s.num_free_blocks == s.num_blocks) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  KvCacheStats s = e.kv_stats();
  EXPECT_EQ(s.num_free_blocks, s.num_blocks);
}

}  // namespace di::engine::testing::engine_util
