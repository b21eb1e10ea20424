// deepseek_v2 / deepseek_v3: the plain (expand latents) and the absorbed (attend in latent
// space) MLA paths each match transformers on their own, over a full forward and over prefill +
// decode, and the automatic choice takes the absorbed path for decode.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "engine/model/deepseek_v2/mla_model.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

using engine::deepseek_v2::MlaModel;
using engine::deepseek_v2::MlaPath;

constexpr double kTolerance = 1e-4;

std::unique_ptr<engine::Model> load_with_path(const Fixture& f, MlaPath path) {
  auto m = load_on(f.dir, "cpu", 2);
  if (!m) return nullptr;
  auto* mla = dynamic_cast<MlaModel*>(m.get());
  EXPECT_TRUE(mla) << "not an MLA model";
  if (!mla) return nullptr;
  mla->set_attention_path(path);
  return m;
}

class MlaPaths : public ::testing::TestWithParam<FixtureId> {};

// The fixture's logits on `path`, in one prefill and as prompt then one token per step.
void expect_path_matches_transformers(const Fixture& f, MlaPath path, const std::string& label) {
  auto model = load_with_path(f, path);
  ASSERT_TRUE(model);
  const int32_t n = static_cast<int32_t>(f.all_ids.size());
  const std::vector<float> full = run_chunks(*model, f.all_ids, {n});
  ASSERT_EQ(full.size(), f.logits.size());
  const double worst = worst_rel_err(full, f.logits, f.vocab);
  EXPECT_LE(worst, kTolerance);
  std::printf("%s: worst max|Δ|/max|logit| = %.3g\n", label.c_str(), worst);
  std::vector<int32_t> chunks = {static_cast<int32_t>(f.prompt.size())};
  chunks.insert(chunks.end(), f.greedy.size(), 1);
  const std::vector<float> stepped = run_chunks(*model, f.all_ids, chunks);
  ASSERT_EQ(stepped.size(), f.logits.size());
  EXPECT_LE(worst_rel_err(stepped, f.logits, f.vocab), kTolerance);
}

TEST_P(MlaPaths, PlainPathMatchesTransformers) {
  expect_path_matches_transformers(load_fixture(GetParam()), MlaPath::kPlain, GetParam().name + " plain");
}

TEST_P(MlaPaths, AbsorbedPathMatchesTransformers) {
  expect_path_matches_transformers(load_fixture(GetParam()), MlaPath::kAbsorbed, GetParam().name + " absorbed");
}

TEST_P(MlaPaths, PathsAgreeOnEveryChunking) {
  const Fixture f = load_fixture(GetParam());
  auto plain = load_with_path(f, MlaPath::kPlain);
  auto absorbed = load_with_path(f, MlaPath::kAbsorbed);
  ASSERT_TRUE(plain && absorbed);
  for (const std::vector<int32_t>& chunks : std::vector<std::vector<int32_t>>{{1}, {4, 1}, {17}}) {
    const std::vector<float> a = run_chunks(*plain, f.all_ids, chunks);
    const std::vector<float> b = run_chunks(*absorbed, f.all_ids, chunks);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_LE(worst_rel_err(b, a, f.vocab), 1e-5) << "chunks starting " << chunks[0];
  }
}

TEST_P(MlaPaths, AutoPicksAbsorbedForDecodeAndPlainForLongPrefill) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_with_path(f, MlaPath::kAuto);
  ASSERT_TRUE(model);
  const auto& c = dynamic_cast<MlaModel&>(*model).config();
  EXPECT_EQ(engine::deepseek_v2::choose_mla_path(c, 1, 40), MlaPath::kAbsorbed);
  EXPECT_EQ(engine::deepseek_v2::choose_mla_path(c, 40, 0), MlaPath::kPlain);
}

TEST_P(MlaPaths, CacheEntryIsTheLatentPlusRopeKey) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_with_path(f, MlaPath::kAuto);
  ASSERT_TRUE(model);
  const auto& c = dynamic_cast<MlaModel&>(*model).config();
  ASSERT_EQ(model->cache_groups().size(), 1u);
  const engine::CacheGroupSpec& g = model->cache_groups()[0];
  EXPECT_EQ(g.kind, engine::CacheKind::kFull);
  EXPECT_EQ(g.num_layers, c.num_hidden_layers);
  EXPECT_EQ(g.entry_bytes, static_cast<int64_t>((c.kv_lora_rank + c.qk_rope_head_dim) * sizeof(float)));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MlaPaths, ::testing::ValuesIn(mla_fixtures()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace di::test
