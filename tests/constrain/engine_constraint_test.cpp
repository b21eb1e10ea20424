// Constrained generation through the whole engine (scheduler, ToyModel forward, sampler mask,
// token acceptance) on the engine's toy model: whatever the model's logits prefer, every output
// must be a complete, schema-valid JSON document — checked by the third-party Python validator —
// ending with EOS, for greedy and sampled decoding, batched, and after preemption.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

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

}  // namespace
}  // namespace di::engine::constrain
