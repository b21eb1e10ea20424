// What a request asks of the engine besides the prompt: every sampling field vLLM accepts is
// carried under the engine's names in all three APIs (the seed projects drop several), and
// response_format / text.format become the engine's output constraint.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "recipe/prepare/prepare.h"
#include "request/sampling_params.h"

namespace di::recipe {
namespace {

using nlohmann::json;

Prepared prepared_or_die(Protocol p, const std::string& body) {
  RecipeConfig cfg;
  auto r = prepare(cfg, {}, p, body);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) throw std::runtime_error(r.status().message());
  return *r;
}

TEST(InferenceOptions, ChatCarriesEverySamplingFieldVllmAccepts) {
  Prepared p = prepared_or_die(Protocol::kChatCompletions, R"({"model":"deepseek-v4","max_tokens":100,
    "temperature":0.7,"top_p":0.9,"top_k":40,"min_p":0.05,"seed":42,"presence_penalty":0.5,
    "frequency_penalty":-0.5,"repetition_penalty":1.1,"logit_bias":{"15":-100},"logprobs":true,
    "top_logprobs":3,"n":2,"min_tokens":5,"stop_token_ids":[7],"stop":["END","STOP"],
    "messages":[{"role":"user","content":"a"}]})");
  const di::request::SamplingParams& s = p.engine.sampling;
  EXPECT_EQ(s.max_tokens, 100);
  EXPECT_EQ(s.temperature, 0.7);
  EXPECT_EQ(s.top_p, 0.9);
  EXPECT_EQ(s.top_k, 40);
  EXPECT_EQ(s.min_p, 0.05);
  EXPECT_EQ(s.seed, std::optional<uint64_t>(42));
  EXPECT_EQ(s.presence_penalty, 0.5);
  EXPECT_EQ(s.frequency_penalty, -0.5);
  EXPECT_EQ(s.repetition_penalty, 1.1);
  EXPECT_EQ(s.logit_bias, (std::vector<std::pair<int32_t, float>>{{15, -100.0f}}));
  EXPECT_TRUE(s.logprobs);
  EXPECT_EQ(s.top_logprobs, 3);
  EXPECT_EQ(s.n, 2);
  EXPECT_EQ(s.min_tokens, 5);
  EXPECT_EQ(s.stop_token_ids, std::vector<int32_t>{7});
  EXPECT_TRUE(s.stop.empty()) << "stop strings belong to the output parser";
  // Stop strings go to the output parser, never to the engine (they must not fire in reasoning).
  EXPECT_EQ(p.stop_sequences, (std::vector<std::string>{"END", "STOP"}));
  EXPECT_EQ(p.parser.stop_sequences, p.stop_sequences);
}

// The recipe's reading of the fields every API carries is generated from request/sampling_fields.h:
// each row marked api, given a value inside its range and off its default, reaches the engine's
// SamplingParams. (repetition_penalty 3 also checks that the recipe keeps vLLM's open upper end.)
TEST(InferenceOptions, EveryApiRowOfTheSamplingTableReachesTheEngine) {
  json body = {{"model", "deepseek-v4"}, {"messages", json::array({{{"role", "user"}, {"content", "a"}}})}};
  std::vector<std::pair<const di::request::SamplingField*, double>> want;
  for (const di::request::SamplingField& f : di::request::sampling_fields()) {
    if (!f.api) continue;
    double v = 1;
    if (!f.is_bool()) {
      const double hi = std::isinf(f.max) ? f.min + 12 : f.max;
      v = f.min + (hi - f.min) / 4;
      if (!f.is_double()) v = std::round(v);
    }
    if (f.is_bool()) body[f.name] = true;
    else if (f.is_double()) body[f.name] = v;
    else body[f.name] = static_cast<int64_t>(v);
    want.push_back({&f, v});
  }
  ASSERT_GE(want.size(), 8u);
  Prepared p = prepared_or_die(Protocol::kChatCompletions, body.dump());
  for (const auto& [f, v] : want) EXPECT_EQ(f->get(p.engine.sampling), v) << f->name;
}

// Responses and Messages have one output per request: n > 1 is the protocol's 400, naming n.
TEST(InferenceOptions, OnlyChatTakesSeveralChoices) {
  RecipeConfig cfg;
  auto r = prepare(cfg, {}, Protocol::kResponses, R"({"model":"deepseek-v4","n":2,"input":"a"})");
  ASSERT_FALSE(r.is_ok());
  const json d = json::parse(r.status().detail());
  EXPECT_EQ(d["status"], 400);
  EXPECT_EQ(d["body"]["error"]["param"], "n");
  auto m = prepare(cfg, {}, Protocol::kMessages,
                   R"({"model":"deepseek-v4","max_tokens":5,"n":3,"messages":[{"role":"user","content":"a"}]})");
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("n: this API returns one output"), std::string::npos) << m.status().message();
  EXPECT_EQ(prepared_or_die(Protocol::kChatCompletions,
                            R"({"model":"deepseek-v4","n":3,"messages":[{"role":"user","content":"a"}]})")
                .engine.sampling.n,
            3);
}

TEST(InferenceOptions, ResponsesAndMessagesCarryTheirLimitsAndTheExtraFields) {
  Prepared r = prepared_or_die(Protocol::kResponses, R"({"model":"deepseek-v4","max_output_tokens":100,
    "temperature":0.7,"top_p":0.9,"top_k":40,"top_logprobs":2,"input":"a"})");
  EXPECT_EQ(r.engine.sampling.max_tokens, 100);
  EXPECT_EQ(r.engine.sampling.top_k, 40);
  EXPECT_EQ(r.engine.sampling.top_logprobs, 2);
  EXPECT_TRUE(r.engine.sampling.logprobs);  // top_logprobs implies logprobs
  Prepared m = prepared_or_die(Protocol::kMessages, R"({"model":"deepseek-v4","max_tokens":100,
    "temperature":0.7,"top_p":0.9,"top_k":40,"stop_sequences":["X"],"messages":[{"role":"user","content":"a"}]})");
  di::request::SamplingParams want;
  want.max_tokens = 100;
  want.temperature = 0.7;
  want.top_p = 0.9;
  want.top_k = 40;
  const di::request::SamplingParams& got = m.engine.sampling;
  EXPECT_EQ(std::tie(got.max_tokens, got.temperature, got.top_p, got.top_k, got.n, got.seed, got.logprobs),
            std::tie(want.max_tokens, want.temperature, want.top_p, want.top_k, want.n, want.seed, want.logprobs));
  EXPECT_EQ(m.stop_sequences, std::vector<std::string>{"X"});
}

TEST(InferenceOptions, ResponseFormatBecomesTheEngineConstraint) {
  const std::string schema = R"({"type":"object","properties":{"x":{"type":"number"}},"required":["x"]})";
  Prepared c = prepared_or_die(Protocol::kChatCompletions, R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"}],
    "response_format":{"type":"json_schema","json_schema":{"name":"pt","strict":true,"schema":)" + schema + "}}}");
  EXPECT_EQ(c.constraint.kind, OutputConstraint::Kind::kJsonSchema);
  EXPECT_EQ(c.constraint.name, "pt");
  EXPECT_TRUE(c.constraint.strict);
  EXPECT_EQ(json::parse(c.constraint.schema.dump()), json::parse(schema));
  Prepared r = prepared_or_die(Protocol::kResponses, R"({"model":"deepseek-v4","input":"a",
    "text":{"format":{"type":"json_schema","name":"pt","schema":)" + schema + "}}}");
  EXPECT_EQ(r.constraint.kind, OutputConstraint::Kind::kJsonSchema);
  EXPECT_EQ(r.constraint.name, "pt");
  EXPECT_FALSE(r.constraint.strict);
  EXPECT_EQ(json::parse(r.constraint.schema.dump()), json::parse(schema));
  Prepared o = prepared_or_die(Protocol::kChatCompletions, R"({"model":"deepseek-v4",
    "response_format":{"type":"json_object"},"messages":[{"role":"user","content":"answer in json"}]})");
  EXPECT_EQ(o.constraint.kind, OutputConstraint::Kind::kJsonObject);
  EXPECT_TRUE(o.parser.json_object);
  Prepared t = prepared_or_die(Protocol::kChatCompletions, R"({"model":"deepseek-v4",
    "response_format":{"type":"text"},"messages":[{"role":"user","content":"a"}]})");
  EXPECT_EQ(t.constraint.kind, OutputConstraint::Kind::kNone);
  EXPECT_FALSE(t.parser.json_object);
}

}  // namespace
}  // namespace di::recipe
