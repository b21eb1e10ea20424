// Constrained generation through the whole engine (scheduler, ToyModel forward, sampler mask,
// token acceptance) on the engine's toy model: whatever the model's logits prefer, every output
// must be a complete, schema-valid JSON document — checked by the third-party Python validator —
// ending with EOS, for greedy and sampled decoding, batched, and after preemption.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/constrain/matcher_constraint.h"
#include "engine/engine.h"
#include "tests/engine/toy_model.h"

namespace di::engine::constrain {
namespace {

using engine::testing::kToyVocab;

// The toy model's 97 ids read as JSON pieces (id 0 stays EOS), several spanning token boundaries.
std::shared_ptr<const TokenVocabulary> json_piece_vocab() {
  std::vector<std::string> pieces = {"<eos>", "{", "}", "[", "]", ",", ":", "\"", "\"a\"", "\"b\"", "\"c\"", "\":",
                                     "\",", "{\"", "\"}", "a", "b", "c", "x", "y", "z", "yz", "true", "false",
                                     "tr", "ue", "fa", "lse", "null", " ", "  ", "\n", ",\"", "\"b\":\"", "[t",
                                     "rue]", "e,", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "42",
                                     "99", "-", ".", "e", "E", "+", "\"\"", "ab", "\\", "\\n", "u", "n", "l", "s",
                                     "t", "r", "f", "]}", "],", ":[", ":\"", "\"a\":", "\"c\":[", "07", "100"};
  for (int i = 0; pieces.size() < size_t(kToyVocab); ++i) pieces.push_back(std::string(1, char('A' + i % 26)) + "~");
  auto v = TokenVocabulary::create(pieces, {0}, {});
  EXPECT_TRUE(v.is_ok());
  return std::make_shared<const TokenVocabulary>(std::move(v).value());
}

const char* kSchema = R"({"type": "object",
  "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
                 "b": {"enum": ["x", "yz"]},
                 "c": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}},
  "required": ["a", "b", "c"], "additionalProperties": false})";

struct Output {
  std::string text;
  FinishReason finish = FinishReason::kNone;
  std::string error;
};

std::vector<Output> run(LLMEngine& e, GrammarCompiler& compiler, int n, double temperature) {
  ConstraintSpec spec;
  spec.source = kSchema;
  spec.json.whitespace = JsonWhitespace::kFlexible;
  spec.json.max_whitespace = 2;
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int i = 0; i < n; ++i) {
    SamplingParams p;
    p.temperature = temperature;
    p.seed = uint64_t(i);
    p.max_tokens = 200;
    auto c = make_token_constraint(compiler, spec);
    EXPECT_TRUE(c.is_ok()) << c.status().message();
    std::vector<int32_t> prompt;
    for (int k = 0; k < 5 + i % 7; ++k) prompt.push_back(1 + (k * 13 + i * 7) % 96);
    auto s = e.submit(prompt, p, {}, std::move(c).value());
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    streams.push_back(*s);
  }
  std::vector<Output> out;
  for (auto& s : streams) {
    Output o;
    CompletionChunk c;
    while (s->poll(30000, &c) == RequestStream::Poll::kChunk) {
      for (int32_t t : c.token_ids) {
        if (t != 0) o.text += compiler.vocab()->token(uint32_t(t));
      }
      if (c.finish_reason != FinishReason::kNone) o.finish = c.finish_reason, o.error = c.error;
    }
    out.push_back(o);
  }
  return out;
}

void validate(const std::vector<Output>& outs, const std::string& tag) {
  const std::string path = std::string(DI_BINARY_DIR) + "/constrain_engine_" + tag + ".jsonl";
  std::ofstream f(path);
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_EQ(outs[i].finish, FinishReason::kStop) << tag << " " << i << ": " << outs[i].error << " text " << outs[i].text;
    f << nlohmann::json{{"name", tag + std::to_string(i)}, {"schema", nlohmann::json::parse(kSchema)}, {"output", outs[i].text}}.dump()
      << "\n";
  }
  f.close();
  const std::string cmd = "python3 " DI_SOURCE_DIR "/tests/constrain/validate_outputs.py " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

std::unique_ptr<LLMEngine> make_engine(int64_t kv_bytes) {
  EngineConfig c;
  c.max_model_len = 256;
  c.max_num_batched_tokens = 32;
  if (kv_bytes) c.kv_cache_bytes = kv_bytes;
  auto r = LLMEngine::create(std::make_unique<engine::testing::ToyModel>(4096, 0), c,
                             std::make_shared<engine::testing::ToyTokenText>());
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return std::move(r).value();
}

TEST(EngineConstraint, GreedyAndSampledOutputsAreSchemaValid) {
  GrammarCompiler compiler(json_piece_vocab());
  auto e = make_engine(0);
  validate(run(*e, compiler, 6, 0.0), "greedy");
  validate(run(*e, compiler, 12, 1.0), "sampled");
  EXPECT_EQ(compiler.misses(), 1u);  // one schema, compiled once, shared by every request
  EXPECT_EQ(compiler.hits(), 17u);
}

TEST(EngineConstraint, PreemptedRequestsStillProduceValidOutput) {
  GrammarCompiler compiler(json_piece_vocab());
  // A KV budget of a few blocks forces preemption while 16 requests decode together.
  auto e = make_engine(48 * 1024);
  validate(run(*e, compiler, 16, 1.0), "preempted");
}

// The toy model as a device model would behave: it takes the masks in forward() (after its own
// work, as the CUDA model does once its kernels are launched) and sets forbidden logits to -inf.
class MaskingToyModel final : public Model {
 public:
  const ModelInfo& info() const override { return inner_.info(); }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return inner_.cache_groups(); }
  bool applies_logits_masks() const override { return true; }
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override {
    DI_RETURN_IF_ERROR(inner_.forward(batch, logits));
    if (!batch.masks) return Status::ok();
    const int64_t V = inner_.info().vocab_size, words = (V + 31) / 32, n = static_cast<int64_t>(batch.seqs.size());
    std::vector<uint32_t> w(static_cast<size_t>(n * words), 0xA5A5A5A5u);  // poison: untouched rows must stay unused
    std::vector<uint8_t> masked(static_cast<size_t>(n), 2);
    batch.masks->fill(w.data(), words, masked.data());
    for (int64_t s = 0; s < n; ++s) {
      EXPECT_LE(masked[s], 1u);
      if (!masked[s]) continue;
      ++(*masked_rows);
      for (int64_t t = 0; t < V; ++t)
        if (!((w[s * words + t / 32] >> (t % 32)) & 1u)) logits[s * V + t] = -std::numeric_limits<float>::infinity();
    }
    return Status::ok();
  }
  std::shared_ptr<int64_t> masked_rows = std::make_shared<int64_t>(0);

 private:
  engine::testing::ToyModel inner_{4096, 0};
};

// Counts mask fills, so a test can tell the sampler did not build a mask the model already applied.
class CountingConstraint final : public TokenConstraint {
 public:
  CountingConstraint(std::unique_ptr<TokenConstraint> c, std::shared_ptr<int64_t> fills)
      : c_(std::move(c)), fills_(std::move(fills)) {}
  void fill_mask(uint32_t* bitmask, int64_t num_words) override {
    ++*fills_;
    c_->fill_mask(bitmask, num_words);
  }
  bool accept_token(int32_t token) override { return c_->accept_token(token); }
  void rollback(int32_t n) override { c_->rollback(n); }
  bool is_terminated() const override { return c_->is_terminated(); }
  std::unique_ptr<TokenConstraint> clone() const override {
    return std::make_unique<CountingConstraint>(c_->clone(), fills_);
  }

 private:
  std::unique_ptr<TokenConstraint> c_;
  std::shared_ptr<int64_t> fills_;
};

struct Generation {
  std::vector<std::vector<int32_t>> ids;
  int64_t tokens = 0, fills = 0;
};

Generation generate_with(std::unique_ptr<Model> model, GrammarCompiler& compiler, int64_t kv_bytes) {
  EngineConfig c;
  c.max_model_len = 256;
  c.max_num_batched_tokens = 32;
  if (kv_bytes) c.kv_cache_bytes = kv_bytes;
  auto e = LLMEngine::create(std::move(model), c, std::make_shared<engine::testing::ToyTokenText>());
  EXPECT_TRUE(e.is_ok()) << e.status().message();
  ConstraintSpec spec;
  spec.source = kSchema;
  spec.json.whitespace = JsonWhitespace::kFlexible;
  spec.json.max_whitespace = 2;
  Generation g;
  auto fills = std::make_shared<int64_t>(0);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int i = 0; i < 10; ++i) {
    SamplingParams p;
    p.temperature = i % 2 ? 1.0 : 0.0;
    p.seed = uint64_t(i);
    p.max_tokens = 200;
    if (i == 9) p.n = 3;  // completions forked from one prompt share its first masked row
    std::unique_ptr<TokenConstraint> tc;
    if (i != 4) tc = std::make_unique<CountingConstraint>(std::move(make_token_constraint(compiler, spec)).value(), fills);
    std::vector<int32_t> prompt;
    for (int k = 0; k < 5 + i % 7; ++k) prompt.push_back(1 + (k * 13 + i * 7) % 96);
    auto s = (*e)->submit(prompt, p, {}, std::move(tc));
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    streams.push_back(*s);
  }
  for (auto& s : streams) {
    std::map<int32_t, std::vector<int32_t>> by_index;
    CompletionChunk c;
    while (s->poll(30000, &c) == RequestStream::Poll::kChunk) {
      EXPECT_TRUE(c.error.empty()) << c.error;
      by_index[c.index].insert(by_index[c.index].end(), c.token_ids.begin(), c.token_ids.end());
    }
    for (auto& [i, ids] : by_index) {
      if (&s != &streams[4]) g.tokens += static_cast<int64_t>(ids.size());
      g.ids.push_back(std::move(ids));
    }
  }
  g.fills = *fills;
  return g;
}

TEST(EngineConstraint, MasksAppliedByTheModelGiveTheSameOutputsAndAreBuiltOncePerToken) {
  GrammarCompiler compiler(json_piece_vocab());
  for (int64_t kv : {int64_t{0}, int64_t{48 * 1024}}) {  // also under preemption
    const Generation host = generate_with(std::make_unique<engine::testing::ToyModel>(4096, 0), compiler, kv);
    auto model = std::make_unique<MaskingToyModel>();
    std::shared_ptr<int64_t> device_rows = model->masked_rows;
    const Generation device = generate_with(std::move(model), compiler, kv);
    EXPECT_EQ(device.ids, host.ids) << "kv " << kv;
    ASSERT_EQ(device.ids.size(), 12u);
    // On the host one fill per constrained token sampled; with the model masking, the forked
    // completions' first tokens reuse the parent's masked row (2 fewer fills), the sampler builds
    // none, and the unconstrained request is never masked.
    EXPECT_GE(host.fills, host.tokens - 12) << "kv " << kv;  // token_ids may leave out each final EOS
    EXPECT_LE(host.fills, host.tokens + 12) << "kv " << kv;
    EXPECT_EQ(device.fills, host.fills - 2) << "kv " << kv;
    EXPECT_EQ(*device_rows, device.fills) << "kv " << kv;
  }
}

}  // namespace
}  // namespace di::engine::constrain
