// Our CPU model on DeepSeek's shipped formats (tests/fixtures/model_quant/<model>/quantized)
// against transformers 5.17 on the dequantized twin (<model>/dequantized/fixture.json and
// logits.f32, written by tools/fixtures/quant_reference.py on a machine with transformers):
// every position's logits within the family fixtures' fp32 tolerance, the greedy continuation
// identical, prefill + decode equal to one forward. Until the reference files exist each test
// skips and says which file is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tests/common/model_checks.h"
#include "tests/common/model_fixture.h"

namespace di::test {
namespace {

std::string model_dir(const std::string& model, const std::string& kind) {
  return std::string(DI_FIXTURES_DIR) + "/model_quant/" + model + "/" + kind;
}

class QuantReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string ref = model_dir(GetParam(), "dequantized") + "/fixture.json";
    if (!std::filesystem::exists(ref))
      GTEST_SKIP() << "no transformers reference " << ref << " (tools/fixtures/quant_reference.py writes it)";
    f = load_fixture({"quant", GetParam() + "/dequantized"});
    engine::ModelOptions opts;
    opts.num_threads = 2;
    auto m = engine::load_model(model_dir(GetParam(), "quantized"), opts);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    model = std::move(m).value();
    ASSERT_EQ(model->info().vocab_size, f.vocab);
  }

  Fixture f;
  std::unique_ptr<engine::Model> model;
};

TEST_P(QuantReference, ReferenceHasNoNearTieOnTheGreedyRows) {
  // The generator keeps only prompts whose greedy argmaxes clear this margin; a hand-edited or
  // truncated logits file would not.
  const size_t p = f.prompt.size();
  for (size_t i = 0; i < f.greedy.size(); ++i) {
    const float* row = f.logits.data() + (p - 1 + i) * f.vocab;
    std::vector<float> sorted(row, row + f.vocab);
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    EXPECT_GE(sorted[0] - sorted[1], 2e-4f) << "greedy step " << i;
    EXPECT_EQ(argmax(row, f.vocab), f.greedy[i]) << "greedy step " << i;
  }
}

TEST_P(QuantReference, QuantizedLogitsMatchTransformersOnTheDequantizedWeights) {
  RecordProperty("worst_rel_err", std::to_string(expect_full_sequence_matches(*model, f, GetParam() + " (quantized)")));
}

TEST_P(QuantReference, QuantizedGreedyContinuationMatchesTransformers) {
  EXPECT_EQ(greedy_continuation(*model, f), f.greedy);
}

TEST_P(QuantReference, QuantizedPrefillThenDecodeEqualsFullForward) {
  expect_prefill_then_decode_equals_full(*model, f);
}

INSTANTIATE_TEST_SUITE_P(Models, QuantReference, ::testing::Values("v4_fp8_fp4", "v3_fp8"));

}  // namespace
}  // namespace di::test
