// The trained demo model (models/deepseek-v4-demo, made by tools/demo_model/train.py) on the CPU
// against transformers' logits on the same committed bf16 weights (tests/fixtures/model_v4_demo):
// full-sequence logits, greedy continuation, the prompts' tokenization, and the mtp.0.* tensors
// loading next to transformers' names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

std::unique_ptr<engine::Model> load_demo() { return load_on(kDemoDir, "cpu", 2); }

Fixture load_demo_fixture(const std::string& name) {
  const std::string dir = fixture_dir(demo_fixture(name));
  EXPECT_TRUE(fs::exists(dir + "/fixture.json")) << "missing " << dir << "/fixture.json (train.py writes it)";
  if (!fs::exists(dir + "/fixture.json")) return {};
  return load_fixture(demo_fixture(name));
}

// Every test of a demo fixture needs the committed model and the fixture `GetParam()`: SetUp skips
// without the model, and loads both, so a missing fixture fails the test before its body.
class V4Demo : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_DEMO_MODEL();
    f = load_demo_fixture(GetParam());
    ASSERT_FALSE(f.all_ids.empty());
    model = load_demo();
    ASSERT_TRUE(model);
  }

  Fixture f;
  std::unique_ptr<engine::Model> model;
};

TEST_P(V4Demo, FullSequenceLogitsMatchTransformers) {
  expect_full_sequence_matches(*model, f, GetParam());
}

TEST_P(V4Demo, GreedyContinuationMatchesTransformers) {
  EXPECT_EQ(greedy_continuation(*model, f), f.greedy);
}

// The prompt ids came from the `tokenizers` package on the committed tokenizer.json; ours must
// produce the same, added tokens (<｜User｜>, <think>, ...) included.
TEST_P(V4Demo, PromptTokenizesAsTheTokenizersPackage) {
  auto tok = recipe::Tokenizer::load(kDemoDir);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  recipe::EncodeOptions opts;
  opts.recognize_added_tokens = true;
  opts.add_special_tokens = f.meta.at("prompt_add_bos").get<bool>();
  auto ids = (*tok)->encode(f.meta.at("prompt_text").get<std::string>(), opts);
  ASSERT_TRUE(ids.is_ok()) << ids.status().message();
  EXPECT_EQ(*ids, f.prompt);
}

// MTP (issue 21): the mtp.0.* layer on the main model's final streams and the next token, against
// tools/demo_model/mtp_reference.py's logits on the same weights (row i predicts token i + 2); run
// in one chunk and in two, so its sliding-window rows go through the cache.
TEST_P(V4Demo, MtpLogitsMatchTheReference) {
  // demo_long is for the main model's long-context paths; it carries no MTP logits (null).
  if (!f.meta.contains("mtp_logits_file") || !f.meta.at("mtp_logits_file").is_string())
    GTEST_SKIP() << GetParam() << " carries no MTP logits";
  const int64_t rows = f.meta.at("mtp_logits_rows").get<int64_t>(), n = static_cast<int64_t>(f.all_ids.size());
  ASSERT_EQ(rows, n - 1);
  std::vector<float> ref(static_cast<size_t>(rows * f.vocab));
  std::ifstream in(f.dir + "/" + f.meta.at("mtp_logits_file").get<std::string>(), std::ios::binary);
  in.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size() * 4));
  ASSERT_TRUE(in.good());
  const auto& v4 = static_cast<const engine::deepseek_v4::DeepseekV4Model&>(*model);
  ASSERT_EQ(v4.num_mtp_layers(), 1) << v4.weights().mtp_unavailable;
  for (int64_t split : {rows, rows / 2}) {
    engine::ContiguousSequenceCache cache(model->cache_groups(), n);
    std::vector<float> logits(static_cast<size_t>(n * f.vocab)), mtp(static_cast<size_t>(rows * f.vocab));
    std::vector<float> streams;
    ASSERT_TRUE(v4.forward_chunk({f.all_ids.data(), n, 0, &cache}, logits.data(), &streams).is_ok());
    const int64_t width = v4.config().hc_mult * v4.config().hidden_size;
    for (int64_t begin = 0; begin < rows; begin += split) {
      const int64_t len = std::min(split, rows - begin);
      const int32_t* next = f.all_ids.data() + begin + 1;
      ASSERT_TRUE(v4.mtp_forward(0, {next, len, begin, &cache}, streams.data() + begin * width, next,
                                 mtp.data() + begin * f.vocab, nullptr)
                      .is_ok());
    }
    const double err = worst_rel_err(mtp, ref, f.vocab);
    std::printf("%s MTP in chunks of %lld: worst max|d|/max|logit| = %.3g over %lld positions\n", GetParam().c_str(),
                static_cast<long long>(split), err, static_cast<long long>(rows));
    EXPECT_LE(err, kFixtureTolerance);
  }
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
