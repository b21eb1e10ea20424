// DeepSeek-V3's MTP layer against PyTorch: tests/fixtures/model_deepseek_v3_mtp/deepseek_v3_mtp/
// holds a random V3 with an MTP layer and the draft logits tools/mtp_reference/make_fixture.py
// computed for it (transformers for the main model, the reference MTP module for the drafts): at
// every known position, and along a draft chained to its full depth. Skips while the fixture
// has not been made (it needs PyTorch; see the folder's README).
#include <gtest/gtest.h>

#include <cstdio>

#include "engine/model/deepseek_v2/mla_model.h"
#include "tests/common/mtp_fixture.h"

namespace di::test {
namespace {

const std::string kDir = std::string(DI_FIXTURES_DIR) + "/model_deepseek_v3_mtp/deepseek_v3_mtp";

#define SKIP_WITHOUT_MTP_FIXTURE()                                                                     \
  do {                                                                                                 \
    if (!fs::exists(mtp_fixture_path(kDir)))                                                           \
      GTEST_SKIP() << "tests/fixtures/model_deepseek_v3_mtp/deepseek_v3_mtp absent: make it with "     \
                      "tools/mtp_reference/make_fixture.py (PyTorch)";                                 \
  } while (0)

std::unique_ptr<engine::Model> load_fixture_model() { return load_on(kDir, "cpu", 2); }

TEST(MlaMtpFixture, DraftLogitsAtEveryPositionMatchTheReference) {
  SKIP_WITHOUT_MTP_FIXTURE();
  const MtpFixture f = load_mtp_fixture(kDir);
  auto model = load_fixture_model();
  ASSERT_TRUE(model);
  auto* mla = dynamic_cast<engine::deepseek_v2::MlaModel*>(model.get());
  ASSERT_NE(mla, nullptr);
  ASSERT_EQ(mla->num_mtp_layers(), 1) << mla->weights().mtp_unavailable;
  for (const MtpCase& c : f.cases) {
    engine::ContiguousSequenceCache cache(model->cache_groups(), static_cast<int64_t>(c.ids.size()));
    std::vector<float> logits(static_cast<size_t>(c.known * f.vocab)), hidden, mtp(logits.size());
    ASSERT_TRUE(mla->forward_hidden({c.ids.data(), c.known, 0, &cache, true}, logits.data(), &hidden).is_ok());
    const std::vector<float> prev = mla->main_hidden_for_mtp(hidden.data(), c.known);
    ASSERT_TRUE(mla->mtp_forward(0, {c.ids.data() + 1, c.known, 0, &cache, true}, prev.data(), mtp.data(), nullptr)
                    .is_ok());
    const double err = worst_rel_err(mtp, c.depth1, f.vocab);
    std::printf("%d positions: worst relative error %.3g\n", c.known, err);
    EXPECT_LT(err, 1e-4);
  }
}

TEST(MlaMtpFixture, ChainedDraftMatchesTheReference) {
  SKIP_WITHOUT_MTP_FIXTURE();
  const MtpFixture f = load_mtp_fixture(kDir);
  auto model = load_fixture_model();
  ASSERT_TRUE(model);
  for (const MtpCase& c : f.cases) {
    const double err = chain_error(*model, c, f.vocab);
    std::printf("draft of %zu after %d positions: worst relative error %.3g\n", c.chain_tokens.size(), c.known, err);
    EXPECT_LT(err, 1e-4);
  }
}

}  // namespace
}  // namespace di::test
