// deepseek_v4 config.json parsing: the legacy spellings transformers folds in give the same
// model (checked against the fixture's logits), and bad fields give errors naming them. Also
// the cache seam's entry counts.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v4/config.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

using engine::deepseek_v4::parse_config;

TEST(V4Config, LegacyKeysGiveTheSameModel) {
  // DeepSeek's own config spelling: compress_ratios, compress_rate_csa/hca, num_hash_layers,
  // qk_rope_head_dim and a flat rope_scaling whose YaRN applies to compressed layers only.
  const Fixture f = load_fixture("real_rates_long");
  json c = read_config("real_rates_long");
  ASSERT_EQ(c["layer_types"], json({"heavily_compressed_attention", "compressed_sparse_attention",
                                    "sliding_attention"}));
  const json compress = c["rope_parameters"]["compress"];
  for (const char* k : {"layer_types", "mlp_layer_types", "compress_rates", "partial_rotary_factor",
                        "rope_parameters"})
    c.erase(k);
  c["compress_ratios"] = {128, 4, 0};
  c["compress_rate_csa"] = 4;
  c["compress_rate_hca"] = 128;
  c["num_hash_layers"] = 1;
  c["qk_rope_head_dim"] = 8;
  c["rope_scaling"] = {{"type", "yarn"}, {"factor", compress["factor"]},
                       {"original_max_position_embeddings", compress["original_max_position_embeddings"]},
                       {"beta_fast", compress["beta_fast"]}, {"beta_slow", compress["beta_slow"]}};
  const std::string dir = scratch_dir("legacy");
  std::ofstream(dir + "/config.json") << c.dump(1);
  fs::copy_file(f.dir + "/model.safetensors", dir + "/model.safetensors");
  auto m = engine::load_model(dir, {});
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const auto got = run_chunks(**m, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  for (size_t r = 0; r < f.all_ids.size(); ++r)
    ASSERT_LE(row_rel_err(got.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab), 1e-4) << r;
}

TEST(V4Config, DefaultsFollowTransformers) {
  json c = read_config("mixed_yarn_hc2");
  for (const char* k : {"layer_types", "mlp_layer_types", "compress_rates"}) c.erase(k);
  c["num_hidden_layers"] = 6;
  auto cfg = parse_config(c);
  ASSERT_TRUE(cfg.is_ok()) << cfg.status().message();
  using engine::deepseek_v4::AttnType;
  using engine::deepseek_v4::MlpType;
  // Two HCA layers, then CSA / HCA alternating from CSA; three hash layers; rates 4 and 128.
  EXPECT_EQ(cfg->layer_types, (std::vector<AttnType>{AttnType::kHCA, AttnType::kHCA, AttnType::kHCA,
                                                     AttnType::kCSA, AttnType::kHCA, AttnType::kCSA}));
  EXPECT_EQ(cfg->mlp_layer_types, (std::vector<MlpType>{MlpType::kHashMoe, MlpType::kHashMoe, MlpType::kHashMoe,
                                                        MlpType::kMoe, MlpType::kMoe, MlpType::kMoe}));
  EXPECT_EQ(cfg->compress_rate_csa, 4);
  EXPECT_EQ(cfg->compress_rate_hca, 128);
}

void expect_error(json c, const std::string& field_in_message) {
  auto cfg = parse_config(c);
  ASSERT_FALSE(cfg.is_ok()) << "accepted a config that should fail on " << field_in_message;
  EXPECT_NE(cfg.status().message().find(field_in_message), std::string::npos) << cfg.status().message();
}

TEST(V4Config, MissingOrInconsistentFieldsAreNamed) {
  const json base = read_config("mixed_yarn_hc2");
  json c = base;
  c.erase("hidden_size");
  expect_error(c, "hidden_size: missing");
  c = base;
  c["head_dim"] = "32";
  expect_error(c, "head_dim: expected an integer");
  c = base;
  c["layer_types"] = {"sliding_attention"};
  expect_error(c, "layer_types");
  c = base;
  c["layer_types"][1] = "full_attention";
  expect_error(c, "layer_types[1]");
  c = base;
  c["o_groups"] = 3;
  expect_error(c, "o_groups");
  c = base;
  c["qk_rope_head_dim"] = 16;  // partial_rotary_factor 0.25 of 32 says 8
  expect_error(c, "qk_rope_head_dim");
  c = base;
  c["num_key_value_heads"] = 2;
  expect_error(c, "num_key_value_heads");
  c = base;
  c["index_head_dim"] = 4;  // fewer channels than the 8 rotated ones
  expect_error(c, "index_head_dim");
  c = base;
  c.erase("index_topk");
  expect_error(c, "index_topk: missing");
  c = base;
  c["rope_parameters"]["compress"].erase("original_max_position_embeddings");
  expect_error(c, "original_max_position_embeddings");
  c = base;
  c["scoring_func"] = "relu";
  expect_error(c, "scoring_func");
}

TEST(CacheSeam, EntriesNeededFollowEachKind) {
  using engine::CacheKind;
  engine::CacheGroupSpec full{"f", CacheKind::kFull, 1, 4, 0, 1, 0};
  engine::CacheGroupSpec ring{"r", CacheKind::kSlidingRing, 1, 4, 8, 1, 0};
  engine::CacheGroupSpec comp{"c", CacheKind::kCompressed, 1, 4, 0, 4, 0};
  engine::CacheGroupSpec slot{"s", CacheKind::kStateSlot, 1, 4, 0, 1, 3};
  for (int64_t n : {0, 1, 3, 4, 7, 8, 9, 100}) {
    EXPECT_EQ(engine::cache_entries_needed(full, n), n);
    EXPECT_EQ(engine::cache_entries_needed(ring, n), std::min<int64_t>(n, 8));
    EXPECT_EQ(engine::cache_entries_needed(comp, n), n / 4);
    EXPECT_EQ(engine::cache_entries_needed(slot, n), 3);
  }
  engine::ContiguousSequenceCache cache({full, comp}, 9);
  EXPECT_NE(cache.entry(0, 0, 8), cache.entry(0, 0, 7));
  EXPECT_THROW(cache.entry(1, 0, 2), std::out_of_range);  // 9 tokens close only 2 windows
}

}  // namespace
}  // namespace di::test
