// The dense and MLA families reject bad configs and checkpoints with errors that name the field
// or tensor, and load_model dispatches on model_type.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/llama/llama_config.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

const FixtureId kLlama{"llama", "llama3_gqa_tied"};
const FixtureId kQwen2{"qwen2", "qwen2_bias"};
const FixtureId kQwen3{"qwen3", "qwen3_qk_norm"};
const FixtureId kV2{"deepseek_v2", "deepseek_v2_lite_greedy"};
const FixtureId kV3{"deepseek_v3", "deepseek_v3_qlora_yarn"};

// One top-level field of a fixture's config set to a value its parser must reject.
struct BadField {
  FixtureId config;
  const char* field;
  json value;
};

// Each bad field, on its own, fails `parse` with an error that names the field.
template <class Parse>
void expect_each_named(Parse parse, std::initializer_list<BadField> cases) {
  for (const BadField& bad : cases) {
    SCOPED_TRACE(bad.field);
    json c = read_config(bad.config);
    c[bad.field] = bad.value;
    expect_error_mentions(parse(c).status(), bad.field);
  }
}

TEST(FamilyConfig, DenseDefaultsFollowEachModelType) {
  auto qwen2 = engine::llama::parse_llama_config(read_config(kQwen2));
  ASSERT_TRUE(qwen2.is_ok()) << qwen2.status().message();
  EXPECT_TRUE(qwen2->qkv_bias);
  EXPECT_FALSE(qwen2->o_bias);
  EXPECT_EQ(qwen2->head_dim, 16);  // hidden / heads
  json q3 = read_config(kQwen3);
  q3.erase("head_dim");
  auto qwen3 = engine::llama::parse_llama_config(q3);
  ASSERT_TRUE(qwen3.is_ok());
  EXPECT_EQ(qwen3->head_dim, 128);  // Qwen3Config's default, not hidden / heads
  EXPECT_TRUE(qwen3->qk_norm);
  auto llama = engine::llama::parse_llama_config(read_config(kLlama));
  ASSERT_TRUE(llama.is_ok());
  EXPECT_EQ(llama->rope.rope_type, "llama3");
  EXPECT_TRUE(llama->tie_word_embeddings);
}

TEST(FamilyConfig, OldStyleRopeScalingIsRead) {
  json c = read_config(kLlama);
  json rope = c["rope_parameters"];
  c.erase("rope_parameters");
  c["rope_theta"] = rope["rope_theta"];
  rope.erase("rope_theta");
  rope.erase("rope_type");
  rope["type"] = "llama3";
  c["rope_scaling"] = rope;
  auto parsed = engine::llama::parse_llama_config(c);
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  EXPECT_EQ(parsed->rope.rope_type, "llama3");
  EXPECT_EQ(parsed->rope.rope_theta, 10000.0);
  EXPECT_EQ(parsed->rope.original_max_position_embeddings, 64);
}

TEST(FamilyConfig, BadDenseFieldsAreNamed) {
  expect_each_named(engine::llama::parse_llama_config, {{kLlama, "num_key_value_heads", 3},
                                                        {kQwen2, "use_sliding_window", true},
                                                        {kQwen3, "hidden_act", "gelu"},
                                                        {kLlama, "hidden_size", "wide"}});
  json c = read_config(kLlama);
  c["rope_parameters"]["rope_type"] = "dynamic";
  expect_error_mentions(engine::llama::parse_llama_config(c).status(), "rope_parameters.rope_type");
  c = read_config(kLlama);
  c["rope_parameters"].erase("low_freq_factor");
  expect_error_mentions(engine::llama::parse_llama_config(c).status(), "low_freq_factor");
}

TEST(FamilyConfig, MlaRoutingFollowsTheModelType) {
  auto v2 = engine::deepseek_v2::parse_mla_config(read_config(kV2));
  ASSERT_TRUE(v2.is_ok()) << v2.status().message();
  EXPECT_EQ(v2->routing, engine::deepseek_v2::Routing::kSoftmaxGreedy);
  EXPECT_EQ(v2->q_lora_rank, 0);  // null: q_proj straight from the hidden state
  auto v3 = engine::deepseek_v2::parse_mla_config(read_config(kV3));
  ASSERT_TRUE(v3.is_ok()) << v3.status().message();
  EXPECT_EQ(v3->routing, engine::deepseek_v2::Routing::kSigmoidNoAux);
  EXPECT_TRUE(v3->norm_topk_prob);
  // Real V3 checkpoints spell their routing out; what transformers computes is accepted.
  json c = read_config(kV3);
  c["scoring_func"] = "sigmoid";
  c["topk_method"] = "noaux_tc";
  EXPECT_TRUE(engine::deepseek_v2::parse_mla_config(c).is_ok());
}

TEST(FamilyConfig, BadMlaFieldsAreNamed) {
  expect_each_named(engine::deepseek_v2::parse_mla_config, {{kV3, "n_group", 3},
                                                            {kV3, "topk_group", 5},
                                                            {kV3, "scoring_func", "softmax"},
                                                            {kV2, "topk_method", "noaux_tc"},
                                                            {kV2, "num_experts_per_tok", 9},
                                                            {kV2, "qk_rope_head_dim", 7},
                                                            {kV2, "moe_layer_freq", 2}});
}

TEST(FamilyLoader, MissingTensorIsNamed) {
  for (const FixtureId& id : {kQwen3, kV3}) {
    std::vector<RawTensor> tensors = read_all(fixture_dir(id));
    const std::string victim = id.family == "qwen3" ? "model.layers.1.self_attn.k_norm.weight"
                                                    : "model.layers.2.mlp.gate.e_score_correction_bias";
    const size_t before = tensors.size();
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [&](const RawTensor& t) { return t.name == victim; }),
                  tensors.end());
    ASSERT_EQ(tensors.size() + 1, before);
    const std::string dir = make_model_dir("missing_" + id.name, read_config(id), tensors);
    const Status st = load_status(dir);
    EXPECT_EQ(st.code(), StatusCode::kNotFound);
    expect_error_mentions(st, victim);
  }
}

TEST(FamilyLoader, MisshapenTensorIsNamed) {
  std::vector<RawTensor> tensors = read_all(fixture_dir(kV2));
  for (RawTensor& t : tensors)
    if (t.name == "model.layers.0.self_attn.kv_b_proj.weight") t.shape = {t.shape[1], t.shape[0]};
  const std::string dir = make_model_dir("misshapen", read_config(kV2), tensors);
  expect_error_mentions(load_status(dir), "model.layers.0.self_attn.kv_b_proj.weight");
}

TEST(FamilyLoader, ExtraTensorIsNamed) {
  std::vector<RawTensor> tensors = read_all(fixture_dir(kQwen2));
  tensors.push_back({"model.layers.0.self_attn.o_proj.bias", "F32", {64}, std::vector<uint8_t>(64 * 4, 0)});
  const std::string dir = make_model_dir("extra", read_config(kQwen2), tensors);
  expect_error_mentions(load_status(dir), "model.layers.0.self_attn.o_proj.bias");
}

TEST(FamilyLoader, UntiedConfigWithoutHeadIsAnError) {
  json c = read_config(kLlama);
  c["tie_word_embeddings"] = false;
  const std::string dir = make_model_dir("untied", c, read_all(fixture_dir(kLlama)));
  expect_error_mentions(load_status(dir), "lm_head.weight");
}

TEST(FamilyLoader, FusedExpertTensorsLoadAndGiveTheSameLogits) {
  // transformers' in-memory MoE layout (experts.gate_up_proj [E, 2I, H], experts.down_proj
  // [E, H, I]) loads as well as the per-expert checkpoint names.
  const Fixture f = load_fixture(kV3);
  const json config = read_config(kV3);
  const int64_t E = config["n_routed_experts"], I = config["moe_intermediate_size"], H = config["hidden_size"];
  std::vector<RawTensor> in = read_all(fixture_dir(kV3)), out;
  std::map<std::string, const RawTensor*> by_name;
  for (const RawTensor& t : in) by_name[t.name] = &t;
  for (const RawTensor& t : in)
    if (t.name.find(".mlp.experts.") == std::string::npos) out.push_back(t);
  for (int l = config["first_k_dense_replace"].get<int>(); l < config["num_hidden_layers"].get<int>(); ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".mlp.experts.";
    RawTensor gate_up{p + "gate_up_proj", "F32", {E, 2 * I, H}, {}}, down{p + "down_proj", "F32", {E, H, I}, {}};
    for (int64_t e = 0; e < E; ++e) {
      const std::string pe = p + std::to_string(e) + ".";
      for (const char* part : {"gate_proj", "up_proj"}) {
        const auto& b = by_name.at(pe + part + ".weight")->bytes;
        gate_up.bytes.insert(gate_up.bytes.end(), b.begin(), b.end());
      }
      const auto& b = by_name.at(pe + "down_proj.weight")->bytes;
      down.bytes.insert(down.bytes.end(), b.begin(), b.end());
    }
    out.push_back(std::move(gate_up));
    out.push_back(std::move(down));
  }
  const std::string dir = make_model_dir("fused_experts", config, out);
  auto model = engine::load_model(dir, {});
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::vector<float> got = run_chunks(**model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  ASSERT_EQ(got.size(), f.logits.size());
  EXPECT_LE(worst_rel_err(got, f.logits, f.vocab), 1e-4);
}

TEST(FamilyLoader, MtpLayersAreKeptAsideNotRejected) {
  // Real V3 checkpoints store num_nextn_predict_layers MTP layers after the decoder layers.
  json c = read_config(kV3);
  c["num_nextn_predict_layers"] = 1;
  std::vector<RawTensor> tensors = read_all(fixture_dir(kV3));
  const int layers = c["num_hidden_layers"];
  tensors.push_back({"model.layers." + std::to_string(layers) + ".eh_proj.weight", "F32", {2, 2}, std::vector<uint8_t>(16, 0)});
  const std::string dir = make_model_dir("mtp", c, tensors);
  EXPECT_TRUE(load_status(dir).is_ok()) << load_status(dir).message();
  // Declared or not: transformers ignores them, and so does a run without drafts.
  c["num_nextn_predict_layers"] = 0;
  const std::string dir0 = make_model_dir("no_mtp", c, tensors);
  EXPECT_TRUE(load_status(dir0).is_ok()) << load_status(dir0).message();
  // A decoder layer past num_hidden_layers is no MTP layer: a wrong config.
  tensors.push_back({"model.layers." + std::to_string(layers + 1) + ".input_layernorm.weight", "F32", {2},
                     std::vector<uint8_t>(8, 0)});
  const std::string bad = make_model_dir("extra_layer", c, tensors);
  expect_error_mentions(load_status(bad), "input_layernorm");
}

TEST(FamilyRegistry, UnknownModelTypeListsTheKnownFamilies) {
  json c = read_config(kQwen2);
  c["model_type"] = "mistral";
  const std::string dir = make_model_dir("unknown_type", c, read_all(fixture_dir(kQwen2)));
  const Status st = load_status(dir);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  for (const char* family : {"deepseek_v2", "deepseek_v3", "llama", "qwen2", "qwen3"}) expect_error_mentions(st, family);
}

}  // namespace
}  // namespace di::test
