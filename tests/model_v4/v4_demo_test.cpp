// The trained demo model (models/deepseek-v4-demo, made by tools/demo_model/train.py) on the CPU
// against transformers' logits on the same committed bf16 weights (tests/fixtures/model_v4_demo):
// full-sequence logits, greedy continuation, the prompts' tokenization, and the mtp.0.* tensors
// loading next to transformers' names.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/model/deepseek_v4/v4_model.h"
#include "recipe/tokenizer/tokenizer.h"
#include "tests/common/model_checks.h"
#include "tests/common/model_fixture.h"

namespace di::test {
namespace {

const std::string kDemoDir = std::string(DI_SOURCE_DIR) + "/models/deepseek-v4-demo";
constexpr int64_t kMaxModelDirBytes = 25'000'000;  // the size the repository carries (issue 22)

const std::vector<std::string>& demo_fixtures() {
  static const std::vector<std::string> kNames = {"demo_bible", "demo_chat", "demo_wordnet", "demo_long"};
  return kNames;
}

FixtureId demo_fixture(const std::string& name) { return {"v4_demo", name}; }

// The only reason to skip: the weights are not committed yet. Once the folder exists every check
// runs, and a missing fixture is a failure.
#define SKIP_WITHOUT_DEMO_MODEL()                                                               \
  do {                                                                                          \
    if (!fs::exists(kDemoDir + "/model.safetensors"))                                           \
      GTEST_SKIP() << "models/deepseek-v4-demo is not committed yet (train it with "            \
                      "tools/demo_model/train.py); nothing to compare";                         \
  } while (0)

std::unique_ptr<engine::Model> load_demo() {
  engine::ModelOptions opts;
  opts.num_threads = 2;
  auto m = engine::load_model(kDemoDir, opts);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

Fixture load_demo_fixture(const std::string& name) {
  const std::string dir = fixture_dir(demo_fixture(name));
  EXPECT_TRUE(fs::exists(dir + "/fixture.json")) << "missing " << dir << "/fixture.json (train.py writes it)";
  if (!fs::exists(dir + "/fixture.json")) return {};
  return load_fixture(demo_fixture(name));
}

class V4Demo : public ::testing::TestWithParam<std::string> {};

TEST_P(V4Demo, FullSequenceLogitsMatchTransformers) {
  SKIP_WITHOUT_DEMO_MODEL();
  const Fixture f = load_demo_fixture(GetParam());
  ASSERT_FALSE(f.all_ids.empty());
  auto model = load_demo();
  ASSERT_TRUE(model);
  expect_full_sequence_matches(*model, f, GetParam());
}

TEST_P(V4Demo, GreedyContinuationMatchesTransformers) {
  SKIP_WITHOUT_DEMO_MODEL();
  const Fixture f = load_demo_fixture(GetParam());
  ASSERT_FALSE(f.all_ids.empty());
  auto model = load_demo();
  ASSERT_TRUE(model);
  EXPECT_EQ(greedy_continuation(*model, f), f.greedy);
}

// The prompt ids came from the `tokenizers` package on the committed tokenizer.json; ours must
// produce the same, added tokens (<｜User｜>, <think>, ...) included.
TEST_P(V4Demo, PromptTokenizesAsTheTokenizersPackage) {
  SKIP_WITHOUT_DEMO_MODEL();
  const Fixture f = load_demo_fixture(GetParam());
  ASSERT_FALSE(f.all_ids.empty());
  auto tok = recipe::Tokenizer::load(kDemoDir);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  recipe::EncodeOptions opts;
  opts.recognize_added_tokens = true;
  opts.add_special_tokens = f.meta.at("prompt_add_bos").get<bool>();
  auto ids = (*tok)->encode(f.meta.at("prompt_text").get<std::string>(), opts);
  ASSERT_TRUE(ids.is_ok()) << ids.status().message();
  EXPECT_EQ(*ids, f.prompt);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V4Demo, ::testing::ValuesIn(demo_fixtures()));

TEST(V4DemoModel, KeepsItsMtpLayerAndFitsTheRepository) {
  SKIP_WITHOUT_DEMO_MODEL();
  auto model = load_demo();
  ASSERT_TRUE(model);
  const auto& v4 = static_cast<const engine::deepseek_v4::DeepseekV4Model&>(*model);
  EXPECT_EQ(v4.config().num_nextn_predict_layers, 1);
  EXPECT_GT(v4.weights().mtp.size(), 0u) << "no mtp.0.* tensors were loaded";
  int64_t bytes = 0;
  for (const auto& e : fs::directory_iterator(kDemoDir))
    if (e.is_regular_file()) bytes += static_cast<int64_t>(e.file_size());
  EXPECT_LE(bytes, kMaxModelDirBytes);
}

}  // namespace
}  // namespace di::test
