// The reply grammar as the engine runs it, token by token: prepare() turns a Chat Completions
// request with a strict tool into the generic spec (EBNF + the tool's schema + control tokens by
// id), the engine compiles it over the vocabulary of a DeepSeek-style tokenizer (control tokens
// as added tokens), and a Matcher walks the ids of the reply. Calls the recipe's DSML renderer
// writes (DeepSeek's reference encoder, byte for byte) are accepted up to EOS; the same text with
// ｜DSML｜ tokenized as plain text, an argument that breaks the schema, or a second call when
// parallel_tool_calls is false, are not.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "capi/src/constraint_vocabulary.h"
#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/matcher.h"
#include "engine/constrain/special_tokens.h"
#include "recipe/encoding/dsml.h"
#include "recipe/encoding/tokens.h"
#include "recipe/prepare/prepare.h"
#include "recipe/tokenizer/tokenizer.h"
#include "tests/recipe_stream/tiny_deepseek_tokenizer.h"

namespace di::engine::constrain {
namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

const char* kWeather = R"({"type": "object", "properties": {
    "city": {"$ref": "#/$defs/City"}, "days": {"type": "integer", "minimum": 1, "maximum": 7},
    "note": {"type": "string", "maxLength": 12}},
  "required": ["city"], "additionalProperties": false,
  "$defs": {"City": {"type": "string", "enum": ["Paris", "Oslo 奥斯陆"]}}})";

class DsmlTokens : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = (fs::temp_directory_path() / ("di-dsml-tokens-" + std::to_string(::getpid()))).string();
    auto tok = recipe::Tokenizer::load(di::testing::write_tiny_deepseek_tokenizer(dir));
    fs::remove_all(dir);
    ASSERT_TRUE(tok.is_ok()) << tok.status().message();
    tok_ = new std::shared_ptr<const recipe::Tokenizer>(*tok);
    const int32_t eos = di::testing::tiny_token_id("<｜end▁of▁sentence｜>");
    auto vocab = model_vocabulary(capi::model_tokens_from_tokenizer(**tok, 0, {eos}));
    ASSERT_TRUE(vocab.is_ok()) << vocab.status().message();
    compiler_ = new GrammarCompiler(std::make_shared<const TokenVocabulary>(std::move(vocab).value()));
  }
  static void TearDownTestSuite() {
    delete compiler_;
    delete tok_;
  }

  // The engine's grammar for a Chat Completions request, through prepare().
  static std::shared_ptr<const CompiledGrammar> grammar_for(const ojson& request) {
    recipe::RecipeConfig cfg;
    cfg.encoding = recipe::Encoding::kDsv41;
    cfg.control_tokens.think_end = di::testing::tiny_token_id("</think>");
    cfg.control_tokens.dsml = di::testing::tiny_token_id("｜DSML｜");
    auto p = recipe::prepare(cfg, {}, recipe::Protocol::kChatCompletions, request.dump());
    EXPECT_TRUE(p.is_ok()) << p.status().message();
    if (!p.is_ok() || !p->engine.constraint) return nullptr;
    EXPECT_EQ(p->engine.constraint->kind, ConstraintKind::kEbnf);
    auto g = compiler_->compile(*p->engine.constraint);
    EXPECT_TRUE(g.is_ok()) << g.status().message();
    return g.is_ok() ? *g : nullptr;
  }

  // True when the grammar takes every id of `text` and then EOS.
  static bool accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text, bool control_tokens = true) {
    auto ids = (*tok_)->encode(text, control_tokens);
    EXPECT_TRUE(ids.is_ok());
    Matcher m(g);
    std::vector<uint32_t> mask(g->vocab().mask_words());
    for (int32_t id : *ids) {
      m.fill_mask(mask.data());
      const bool allowed = (mask[id / 32] >> (id % 32)) & 1;
      const bool taken = m.accept_token(static_cast<uint32_t>(id)).is_ok();
      EXPECT_EQ(allowed, taken) << "the mask and accept_token disagree on id " << id;
      if (!taken) return false;
    }
    return m.accept_token(static_cast<uint32_t>(di::testing::tiny_token_id("<｜end▁of▁sentence｜>"))).is_ok();
  }

  static std::string calls(const ojson& list) {
    recipe::RenderedPrompt p;
    EXPECT_TRUE(recipe::append_tool_calls(p, recipe::dsml_tags_v4(true), list).is_ok());
    return p.str();
  }
  static ojson call(const ojson& args) {
    return {{"type", "function"}, {"function", {{"name", "get_weather"}, {"arguments", args.dump()}}}};
  }
  static ojson request(bool required, bool parallel) {
    ojson r = {{"model", "deepseek-v4"},
               {"messages", ojson::array({{{"role", "user"}, {"content", "Weather?"}}})},
               {"thinking", {{"type", "disabled"}}},
               {"parallel_tool_calls", parallel},
               {"tools", ojson::array({{{"type", "function"},
                                        {"function", {{"name", "get_weather"}, {"strict", true},
                                                      {"parameters", ojson::parse(kWeather)}}}}})}};
    if (required) r["tool_choice"] = "required";
    return r;
  }

  static std::shared_ptr<const recipe::Tokenizer>* tok_;
  static GrammarCompiler* compiler_;
};
std::shared_ptr<const recipe::Tokenizer>* DsmlTokens::tok_ = nullptr;
GrammarCompiler* DsmlTokens::compiler_ = nullptr;

TEST_F(DsmlTokens, ReferenceEncoderCallsAreAcceptedAsTokens) {
  auto g = grammar_for(request(false, true));
  ASSERT_TRUE(g);
  const std::string two = calls(ojson::array({call({{"city", "Oslo 奥斯陆"}, {"days", 3}}),
                                              call({{"city", "Paris"}, {"note", "umbrella\nyes"}})}));
  EXPECT_TRUE(accepts(g, two)) << two;
  EXPECT_TRUE(accepts(g, "Let me check.\n\n" + two));
  EXPECT_TRUE(accepts(g, "No tool needed."));
  // Free text may precede a block, but the ｜DSML｜ token commits to a well-formed call.
  EXPECT_FALSE(accepts(g, "Let me check.\n\n" + calls(ojson::array({call({{"city", "Rome"}})}))));
}

TEST_F(DsmlTokens, DsmlTypedAsTextIsNotACall) {
  auto g = grammar_for(request(true, true));
  ASSERT_TRUE(g);
  const std::string block = calls(ojson::array({call({{"city", "Paris"}})}));
  const std::string opener = "<" + std::string(recipe::tokens::kDsml) + " calls>\n";
  ASSERT_EQ(block.rfind(opener, 0), 0u);
  const std::string inside = block.substr(opener.size());  // tool_choice required opened the block
  EXPECT_TRUE(accepts(g, inside));
  EXPECT_FALSE(accepts(g, inside, /*control_tokens=*/false));
  EXPECT_FALSE(accepts(g, block));
}

TEST_F(DsmlTokens, MalformedCallsAreRejected) {
  auto g = grammar_for(request(false, false));
  ASSERT_TRUE(g);
  EXPECT_TRUE(accepts(g, calls(ojson::array({call({{"city", "Paris"}})}))));
  for (const ojson& args : {ojson{{"city", "Rome"}},                      // not in the $ref'd enum
                            ojson{{"days", 2}},                           // required city missing
                            ojson{{"city", "Paris"}, {"days", 8}},        // above maximum
                            ojson{{"city", "Paris"}, {"note", "far too long a note"}},  // maxLength
                            ojson{{"city", "Paris"}, {"wind", true}}})    // undeclared
    EXPECT_FALSE(accepts(g, calls(ojson::array({call(args)})))) << args.dump();
  // parallel_tool_calls false: one call per block.
  EXPECT_FALSE(accepts(g, calls(ojson::array({call({{"city", "Paris"}}), call({{"city", "Paris"}})}))));
}

}  // namespace
}  // namespace di::engine::constrain
