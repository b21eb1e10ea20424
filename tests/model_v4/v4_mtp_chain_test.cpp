// The demo model's MTP layer (mtp.0.*) chained past its first draft token, against PyTorch:
// tests/fixtures/model_v4_demo/mtp_chain/ holds the draft logits tools/mtp_reference/
// make_fixture.py computed with tools/demo_model/mtp_reference.py (the first at the last known
// position, each later one on the block's own output streams and the token before it). Skips
// while that fixture or the demo model is absent.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/common/mtp_fixture.h"

namespace di::test {
namespace {

const std::string kDemoDir = std::string(DI_SOURCE_DIR) + "/models/deepseek-v4-demo";
const std::string kDir = std::string(DI_FIXTURES_DIR) + "/model_v4_demo/mtp_chain";

TEST(V4MtpChain, ChainedDraftMatchesTheReference) {
  if (!fs::exists(mtp_fixture_path(kDir)))
    GTEST_SKIP() << "tests/fixtures/model_v4_demo/mtp_chain absent: make it with tools/mtp_reference/make_fixture.py";
  if (!fs::exists(kDemoDir + "/model.safetensors")) GTEST_SKIP() << "models/deepseek-v4-demo absent";
  const MtpFixture f = load_mtp_fixture(kDir);
  engine::ModelOptions opts;
  opts.num_threads = 2;
  auto model = engine::load_model(kDemoDir, opts);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ASSERT_TRUE((*model)->drafts_supported().is_ok()) << (*model)->drafts_supported().message();
  ASSERT_FALSE(f.cases.empty());
  for (const MtpCase& c : f.cases) {
    const double err = chain_error(**model, c, f.vocab);
    std::printf("draft of %zu after %d positions: worst relative error %.3g\n", c.chain_tokens.size(), c.known, err);
    // The demo's weights are bf16 read as fp32 on both sides: fp32 rounding only.
    EXPECT_LT(err, 1e-4);
  }
}

}  // namespace
}  // namespace di::test
