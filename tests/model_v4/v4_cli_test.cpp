// `deepinfer logits` and `deepinfer generate` on a fixture: the files and ids they produce match
// transformers, and bad input exits with status 2 and a message.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/model_v4/fixture_util.h"
#include "tests/common/run_command.h"

namespace di::test {
namespace {

std::string cli() { return std::string(DI_BINARY_DIR) + "/bin/deepinfer"; }

// Runs a command; returns its exit status and stdout (stderr folded in).
int run(const std::string& cmd, std::string& output) { return di_test::run_command(cmd + " 2>&1", &output); }

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

TEST(V4Cli, LogitsCommandWritesTransformersLogits) {
  ASSERT_TRUE(fs::exists(cli())) << cli() << " is not built";
  const Fixture f = load_fixture("odd_rates_hc4");
  const std::string out = scratch_dir("cli") + "/logits.f32";
  std::string output;
  ASSERT_EQ(run(cli() + " logits --model " + f.dir + " --ids " + join(f.all_ids) + " --out " + out +
                    " --threads 2", output), 0) << output;
  std::ifstream in(out, std::ios::binary);
  std::vector<float> got(f.logits.size());
  in.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size() * 4));
  ASSERT_TRUE(in.good());
  EXPECT_EQ(in.peek(), EOF);
  for (size_t r = 0; r < f.all_ids.size(); ++r)
    EXPECT_LE(row_rel_err(got.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab), 1e-4) << r;
}

TEST(V4Cli, GenerateCommandPrintsTransformersGreedyIds) {
  ASSERT_TRUE(fs::exists(cli())) << cli() << " is not built";
  const Fixture f = load_fixture("hca_csa_hc3_clip");
  std::string output;
  ASSERT_EQ(run(cli() + " generate --model " + f.dir + " --prompt-ids " + join(f.prompt) +
                    " --max-tokens " + std::to_string(f.greedy.size()) + " --temperature 0 --json --log-level error",
                output), 0) << output;
  const json j = json::parse(output);
  EXPECT_EQ(j["ids"].get<std::vector<int32_t>>(), f.greedy);
}

// --speculative-tokens reaches the engine: the demo model's greedy ids with MTP drafts equal its
// ids without them, and a model without MTP layers is refused by name.
TEST(V4Cli, GenerateWithSpeculativeTokensPrintsTheSameIds) {
  ASSERT_TRUE(fs::exists(cli())) << cli() << " is not built";
  const std::string demo = std::string(DI_SOURCE_DIR) + "/models/deepseek-v4-demo";
  if (!fs::exists(demo + "/model.safetensors")) GTEST_SKIP() << "models/deepseek-v4-demo absent";
  const std::string base = cli() + " generate --model " + demo + " --prompt-ids 0,100,200,300 --max-tokens 24" +
                           " --temperature 0 --ignore-eos --json --log-level error";
  std::string off, on, fixed;
  ASSERT_EQ(run(base, off), 0) << off;
  ASSERT_EQ(run(base + " --speculative-tokens 3", on), 0) << on;
  ASSERT_EQ(run(base + " --speculative-tokens 2 --speculative-fixed", fixed), 0) << fixed;
  const auto want = json::parse(off)["ids"].get<std::vector<int32_t>>();
  EXPECT_EQ(want.size(), 24u);
  EXPECT_EQ(json::parse(on)["ids"].get<std::vector<int32_t>>(), want);
  EXPECT_EQ(json::parse(fixed)["ids"].get<std::vector<int32_t>>(), want);
  std::string refused;
  const Fixture f = load_fixture("hca_csa_hc3_clip");
  EXPECT_NE(run(cli() + " generate --model " + f.dir + " --prompt-ids 1,2,3 --max-tokens 2 --speculative-tokens 2",
                refused), 0);
  EXPECT_NE(refused.find("MTP"), std::string::npos) << refused;
}

TEST(V4Cli, BadInputExitsWithStatus2) {
  ASSERT_TRUE(fs::exists(cli())) << cli() << " is not built";
  const std::string dir = fixture_dir("mixed_yarn_hc2");
  std::string output;
  EXPECT_EQ(run(cli() + " logits --model " + dir + " --ids 1,x --out /dev/null", output), 2);
  EXPECT_NE(output.find("--ids"), std::string::npos) << output;
  EXPECT_EQ(run(cli() + " logits --model " + dir + " --ids 1,512 --out /dev/null", output), 2);
  EXPECT_NE(output.find("vocabulary"), std::string::npos) << output;
  EXPECT_EQ(run(cli() + " generate --model " + dir + " --prompt-ids 3 --temperature -0.5", output), 2);
  EXPECT_NE(output.find("temperature"), std::string::npos) << output;
  EXPECT_EQ(run(cli() + " generate --model " + dir + " --prompt-ids 3,512", output), 2);
  EXPECT_NE(output.find("prompt[1]"), std::string::npos) << output;
  EXPECT_EQ(run(cli() + " logits --model /nonexistent --ids 1 --out /dev/null", output), 1);
  EXPECT_NE(output.find("config.json"), std::string::npos) << output;
}

}  // namespace
}  // namespace di::test
