// Structured output on the GPU: the CUDA Llama model applies the token masks to its device logits
// (filled on the host while the forward runs). Checked against the same forward unmasked (masked
// rows -inf exactly where the mask forbids, everything else bit-identical, prefill and graph-captured
// decode), and end to end: constrained greedy generation on the GPU equals the CPU path's (where
// the sampler applies the masks) on the fp32 Llama fixture, for a regex and a JSON Schema.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/matcher_constraint.h"
#include "engine/llm.h"
#include "engine/model/cuda/device_cache.h"
#include "kernels/cuda/device.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

const FixtureId kLlama{"llama", "llama3_gqa_tied"};  // fp32, 256 ids: id i reads as byte i here

class CudaConstrain : public CudaTest {};

std::unique_ptr<engine::Model> load(const std::string& dir, const std::string& device) {
  engine::ModelOptions opts;
  opts.device = device;
  auto m = engine::load_model(dir, opts);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

// Fixed random masks for sequences 0 and 2 of three; sequence 1 unconstrained.
class RandomMasks final : public engine::LogitsMaskSource {
 public:
  explicit RandomMasks(uint32_t seed) : rng_(seed) {}
  void fill(uint32_t* words, int64_t words_per_row, uint8_t* masked) override {
    masks.assign(3, std::vector<uint32_t>(static_cast<size_t>(words_per_row)));
    for (int s = 0; s < 3; ++s) {
      masked[s] = s != 1;
      if (!masked[s]) continue;
      for (int64_t w = 0; w < words_per_row; ++w) words[s * words_per_row + w] = masks[s][w] = rng_() & rng_();
    }
    ++calls;
  }
  std::vector<std::vector<uint32_t>> masks;
  int calls = 0;

 private:
  std::mt19937 rng_;
};

TEST_F(CudaConstrain, ForwardMasksDeviceLogitsAndLeavesTheRestBitIdentical) {
  const Fixture f = load_fixture(kLlama);
  auto masked_model = load(f.dir, "cuda");
  auto plain_model = load(f.dir, "cuda");
  ASSERT_TRUE(masked_model && plain_model);
  ASSERT_TRUE(masked_model->applies_logits_masks());
  const int64_t V = f.vocab;
  auto caches = [&](engine::Model& m) {
    std::vector<std::unique_ptr<engine::SequenceCache>> c;
    for (int s = 0; s < 3; ++s) c.push_back(std::move(engine::cuda::DeviceSequenceCache::create(m.cache_groups(), 64)).value());
    return c;
  };
  auto cm = caches(*masked_model), cp = caches(*plain_model);
  std::vector<std::vector<int32_t>> ids = {{f.prompt.begin(), f.prompt.begin() + 9},
                                           {f.prompt.begin() + 3, f.prompt.begin() + 20},
                                           {f.prompt.begin() + 1, f.prompt.begin() + 5}};
  RandomMasks masks(5);
  for (int step = 0; step < 4; ++step) {  // a prefill, then decode steps (captured into graphs)
    engine::ForwardBatch bm, bp;
    for (int s = 0; s < 3; ++s) {
      const int32_t n = step == 0 ? static_cast<int32_t>(ids[s].size()) : 1;
      const int64_t start = static_cast<int64_t>(ids[s].size()) - n;
      bm.seqs.push_back({ids[s].data() + start, n, start, cm[s].get(), false});
      bp.seqs.push_back({ids[s].data() + start, n, start, cp[s].get(), false});
    }
    bm.masks = &masks;
    std::vector<float> lm, lp;
    ASSERT_TRUE(masked_model->forward(bm, lm).is_ok());
    ASSERT_TRUE(plain_model->forward(bp, lp).is_ok());
    ASSERT_EQ(masks.calls, step + 1);
    ASSERT_EQ(lm.size(), lp.size());
    int64_t forbidden = 0;
    for (int s = 0; s < 3; ++s) {
      for (int64_t t = 0; t < V; ++t) {
        const float got = lm[s * V + t], plain = lp[s * V + t];
        const bool allowed = s == 1 || ((masks.masks[s][t / 32] >> (t % 32)) & 1u);
        if (allowed) {
          ASSERT_TRUE(got == plain) << "step " << step << " seq " << s << " token " << t;
        } else {
          ASSERT_TRUE(std::isinf(got) && got < 0) << "step " << step << " seq " << s << " token " << t;
          ++forbidden;
        }
      }
    }
    EXPECT_GT(forbidden, V / 2);
    for (int s = 0; s < 3; ++s) ids[s].push_back(static_cast<int32_t>(97 + s + step));
  }
}

// Ids read as bytes: id 0 is the constraint's end of sequence (a stop token for the engine, as
// the fixture's config names no EOS), ids 1..255 the bytes themselves.
std::shared_ptr<const engine::constrain::TokenVocabulary> byte_vocab() {
  std::vector<std::string> t = {""};
  for (int b = 1; b < 256; ++b) t.push_back(std::string(1, char(b)));
  return std::make_shared<const engine::constrain::TokenVocabulary>(
      engine::constrain::TokenVocabulary::create(std::move(t), {0}, {}).value());
}

struct Generated {
  std::vector<int32_t> ids;
  engine::FinishReason finish = engine::FinishReason::kNone;
  std::string error;
};

// Greedy, batched: two prompts under each constraint and one free, in one engine.
std::vector<Generated> generate(const Fixture& f, const std::string& device,
                                const std::vector<engine::constrain::ConstraintSpec>& specs) {
  engine::EngineConfig config;
  config.max_model_len = 128;
  engine::ModelOptions options;
  options.device = device;
  auto llm = engine::LLM::load(f.dir, config, options);
  EXPECT_TRUE(llm.is_ok()) << llm.status().message();
  if (!llm.is_ok()) return {};
  EXPECT_EQ((*llm)->engine().info().model.device, device);
  engine::constrain::GrammarCompiler compiler(byte_vocab());
  std::vector<std::shared_ptr<engine::RequestStream>> streams;
  for (size_t r = 0; r < 2 * specs.size() + 1; ++r) {
    engine::SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 64;
    p.stop_token_ids = {0};
    std::unique_ptr<engine::TokenConstraint> c;
    if (r < 2 * specs.size()) {
      auto made = engine::constrain::make_token_constraint(compiler, specs[r / 2]);
      EXPECT_TRUE(made.is_ok()) << made.status().message();
      c = std::move(made).value();
    }
    std::vector<int32_t> prompt(f.prompt.begin() + static_cast<long>(r % 2) * 7, f.prompt.end());
    auto s = (*llm)->engine().submit(prompt, p, {}, std::move(c));
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    if (s.is_ok()) streams.push_back(*s);
  }
  std::vector<Generated> out;
  for (auto& s : streams) {
    Generated g;
    engine::CompletionChunk c;
    while (s->poll(60000, &c) == engine::RequestStream::Poll::kChunk) {
      g.ids.insert(g.ids.end(), c.token_ids.begin(), c.token_ids.end());
      if (c.finish_reason != engine::FinishReason::kNone) g.finish = c.finish_reason, g.error = c.error;
    }
    out.push_back(g);
  }
  return out;
}

TEST_F(CudaConstrain, ConstrainedGreedyOnTheGpuEqualsTheCpuPath) {
  const Fixture f = load_fixture(kLlama);
  using engine::constrain::ConstraintKind;
  std::vector<engine::constrain::ConstraintSpec> specs(2);
  specs[0].kind = ConstraintKind::kRegex;
  specs[0].source = R"(\{"id": [1-9][0-9]{0,2}, "tag": "[a-z]{2,6}"\})";
  specs[1].kind = ConstraintKind::kJsonSchema;
  // Bounded everywhere, so greedy must finish within max_tokens (an integer could run on as
  // "9.000…", which JSON Schema counts as an integer).
  specs[1].source = R"({"type": "object", "properties": {"ok": {"type": "boolean"},
      "w": {"type": "string", "pattern": "^[a-z]{1,4}$"}, "c": {"enum": ["red", "green"]},
      "b": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2}},
      "required": ["ok", "w", "c", "b"], "additionalProperties": false})";
  specs[1].json.whitespace = engine::constrain::JsonWhitespace::kCompact;
  const std::vector<Generated> cpu = generate(f, "cpu", specs), gpu = generate(f, "cuda", specs);
  ASSERT_EQ(cpu.size(), 5u);
  ASSERT_EQ(gpu.size(), 5u);
  auto vocab = byte_vocab();
  for (size_t r = 0; r < cpu.size(); ++r) {
    EXPECT_EQ(gpu[r].ids, cpu[r].ids) << "request " << r << " gpu error: " << gpu[r].error;
    if (r == 4) {
      EXPECT_EQ(gpu[r].finish, engine::FinishReason::kLength);  // unconstrained: the fixture's own greedy
      continue;
    }
    // Every constrained output is complete under its grammar and ends with the stop id.
    EXPECT_EQ(gpu[r].finish, engine::FinishReason::kStop) << gpu[r].error;
    ASSERT_FALSE(gpu[r].ids.empty());
    EXPECT_EQ(gpu[r].ids.back(), 0);
    auto g = engine::constrain::compile_constraint(specs[r / 2]);
    ASSERT_TRUE(g.is_ok());
    engine::constrain::Matcher m(std::make_shared<const engine::constrain::CompiledGrammar>(*g, vocab));
    std::string text;
    for (int32_t id : gpu[r].ids) {
      ASSERT_TRUE(m.accept_token(static_cast<uint32_t>(id)).is_ok()) << "request " << r << " after '" << text << "'";
      if (id != 0) text += char(id);
    }
    EXPECT_TRUE(m.is_terminated());
    std::printf("request %zu: %s\n", r, text.c_str());
  }
}

}  // namespace
}  // namespace di::test
