// DeepSeek's shipped formats end to end on the CPU: the quantized V4 (fp8 + ue8m0 blocks, fp4
// experts, native names, MTP, shards) and V3 (fp8 + fp32 weight_scale_inv) fixtures give the
// logits and greedy tokens of their dequantized fp32 twins (tools/fixtures/gen_quantized.py);
// quantized weights stay in the mapping; a wrong scale grid, a missing scale, a wrong dtype or a
// mis-packed fp4 tensor is an error naming it.
#include <gtest/gtest.h>

#include <functional>

#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_weights.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"
#include "tests/common/model_fixture.h"

namespace di::test {
namespace {

using kernels::WeightFormat;

std::string quant_dir(const std::string& model, const std::string& kind) {
  return std::string(DI_FIXTURES_DIR) + "/model_quant/" + model + "/" + kind;
}

json config_of(const std::string& dir) {
  std::ifstream in(dir + "/config.json");
  return json::parse(in);
}

std::vector<int32_t> prompt(int64_t vocab) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 28; ++i) ids.push_back(static_cast<int32_t>((i * 37 + 11) % vocab));
  return ids;
}

// Greedy continuation through the model's cache: prefill, then one token a step.
std::vector<int32_t> greedy(engine::Model& model, const std::vector<int32_t>& ids, int32_t n, int64_t vocab) {
  engine::ContiguousSequenceCache cache(model.cache_groups(), static_cast<int64_t>(ids.size() + n));
  std::vector<int32_t> seq = ids, out;
  std::vector<float> logits;
  int64_t pos = 0;
  while (static_cast<int32_t>(out.size()) < n) {
    engine::ForwardBatch batch;
    batch.seqs.push_back({seq.data() + pos, static_cast<int32_t>(seq.size() - pos), pos, &cache, false});
    const Status st = model.forward(batch, logits);
    EXPECT_TRUE(st.is_ok()) << st.message();
    if (!st.is_ok()) return out;
    pos = static_cast<int64_t>(seq.size());
    out.push_back(argmax(logits.data(), vocab));
    seq.push_back(out.back());
  }
  return out;
}

void expect_quantized_equals_dequantized(const std::string& model) {
  auto q = engine::load_model(quant_dir(model, "quantized"), {});
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  auto d = engine::load_model(quant_dir(model, "dequantized"), {});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const int64_t vocab = config_of(quant_dir(model, "dequantized"))["vocab_size"].get<int64_t>();
  const std::vector<int32_t> ids = prompt(vocab);
  const std::vector<int32_t> gq = greedy(**q, ids, 12, vocab), gd = greedy(**d, ids, 12, vocab);
  EXPECT_EQ(gq, gd);
  std::vector<int32_t> all = ids;
  all.insert(all.end(), gd.begin(), gd.end());
  const std::vector<float> lq = run_chunks(**q, all, {static_cast<int32_t>(all.size())});
  const std::vector<float> ld = run_chunks(**d, all, {static_cast<int32_t>(all.size())});
  ASSERT_EQ(lq.size(), all.size() * static_cast<size_t>(vocab));
  ASSERT_EQ(ld.size(), lq.size());
  const double err = worst_rel_err(lq, ld, vocab);
  EXPECT_LT(err, 1e-5) << model;
  std::cout << model << ": max|dlogit|/max|logit| over " << all.size() << " rows = " << err << "\n";
  // Chunked prefill over the quantized weights equals one forward too.
  EXPECT_LT(worst_rel_err(run_chunks(**q, all, {5, 3, 11}), lq, vocab), 1e-5) << model;
}

TEST(QuantizedCheckpoint, V4Fp8Fp4GivesTheDequantizedModelsLogitsAndTokens) {
  expect_quantized_equals_dequantized("v4_fp8_fp4");
}

TEST(QuantizedCheckpoint, V3Fp8GivesTheDequantizedModelsLogitsAndTokens) {
  expect_quantized_equals_dequantized("v3_fp8");
}

TEST(QuantizedCheckpoint, V4WeightsStayInTheMappingInTheirStoredFormats) {
  const std::string dir = quant_dir("v4_fp8_fp4", "quantized");
  auto c = engine::deepseek_v4::parse_config(config_of(dir));
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_TRUE(c->quant.fp8);
  EXPECT_EQ(c->quant.scale_fmt, "ue8m0");
  EXPECT_EQ(c->quant.expert_dtype, "fp4");
  EXPECT_EQ(c->num_nextn_predict_layers, 1);
  auto w = engine::deepseek_v4::load_weights(dir, *c);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  const auto& ck = *(*w)->store.checkpoint;
  const auto& a = (*w)->layers[1].attn;
  EXPECT_EQ(a.wq_b.format, WeightFormat::kFp8E4M3Block);
  EXPECT_EQ(a.wq_b.scale_format, kernels::ScaleFormat::kUE8M0);
  EXPECT_EQ(a.wq_b.data, ck.find("layers.1.attn.wq_b.weight")->data);
  EXPECT_EQ(a.wq_b.scale, ck.find("layers.1.attn.wq_b.scale")->data);
  EXPECT_EQ(a.index_wq_b.format, WeightFormat::kFp8E4M3Block);
  const auto& e = (*w)->layers[2].ffn.experts[3].w2;
  EXPECT_EQ(e.format, WeightFormat::kFp4E2M1Group32);
  EXPECT_EQ(e.data, ck.find("layers.2.ffn.experts.3.w2.weight")->data);
  EXPECT_EQ((*w)->layers[0].ffn.shared.w1.format, WeightFormat::kFp8E4M3Block);
  int mtp = 0;
  for (const engine::TensorView* t : (*w)->mtp) mtp += t->name.rfind("mtp.0.", 0) == 0;
  EXPECT_EQ(mtp, static_cast<int>((*w)->mtp.size()));
  EXPECT_GT(mtp, 50);
}

TEST(QuantizedCheckpoint, V3MtpLayerIsKeptWhenAskedAndSkippedWhenTheConfigHasNone) {
  const std::string dir = quant_dir("v3_fp8", "quantized");
  auto c = engine::deepseek_v2::parse_mla_config(config_of(dir));
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  auto w = engine::deepseek_v2::load_mla_weights(dir, *c);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  ASSERT_FALSE((*w)->mtp.empty());
  for (const engine::TensorView* t : (*w)->mtp) EXPECT_EQ(t->name.rfind("model.layers.3.", 0), 0u) << t->name;
  // A whole fp8 MTP layer: ready to draft, its experts read in place as the decoder's.
  ASSERT_EQ((*w)->mtp_layers.size(), 1u) << (*w)->mtp_unavailable;
  EXPECT_EQ((*w)->mtp_layers[0].block.moe.experts[0].gate.format, WeightFormat::kFp8E4M3Block);
  EXPECT_EQ((*w)->layers[1].moe.experts[0].gate.format, WeightFormat::kFp8E4M3Block);
  EXPECT_EQ((*w)->layers[1].moe.experts[0].gate.scale_format, kernels::ScaleFormat::kF32);
  json no_mtp = config_of(dir);
  no_mtp["num_nextn_predict_layers"] = 0;
  auto c0 = engine::deepseek_v2::parse_mla_config(no_mtp);
  ASSERT_TRUE(c0.is_ok());
  // As transformers does, a run that declares no MTP layer loads past its tensors; only drafting
  // is unavailable, and says why.
  auto w0 = engine::deepseek_v2::load_mla_weights(dir, *c0);
  ASSERT_TRUE(w0.is_ok()) << w0.status().message();
  EXPECT_FALSE((*w0)->mtp.empty());
  EXPECT_TRUE((*w0)->mtp_layers.empty());
  EXPECT_NE((*w0)->mtp_unavailable.find("num_nextn_predict_layers 0"), std::string::npos) << (*w0)->mtp_unavailable;
}

// The quantized V4 fixture with one tensor changed by `edit`, as a single-file checkpoint.
std::string corrupt(const std::string& model, const std::string& scratch,
                    const std::function<void(std::vector<RawTensor>&)>& edit) {
  auto tensors = read_all(quant_dir(model, "quantized"));
  edit(tensors);
  return make_model_dir_in("model_quant", scratch, config_of(quant_dir(model, "quantized")), tensors);
}

RawTensor& find(std::vector<RawTensor>& ts, const std::string& name) {
  for (RawTensor& t : ts)
    if (t.name == name) return t;
  ADD_FAILURE() << "no tensor " << name;
  return ts[0];
}

void expect_error_naming(const std::string& dir, const std::vector<std::string>& words) {
  auto m = engine::load_model(dir, {});
  ASSERT_FALSE(m.is_ok());
  for (const std::string& w : words) EXPECT_NE(m.status().message().find(w), std::string::npos) << m.status().message();
}

TEST(QuantizedCheckpointErrors, WrongScaleGridNamesTheScale) {
  // wq_b is [192, 40]: a grid of 2 x 1 blocks; a 1 x 1 grid is wrong.
  const auto dir = corrupt("v4_fp8_fp4", "grid", [](auto& ts) {
    RawTensor& s = find(ts, "layers.0.attn.wq_b.scale");
    s.shape = {1, 1};
    s.bytes.resize(1);
  });
  expect_error_naming(dir, {"layers.0.attn.wq_b.scale", "scale grid [1, 1], expected [2, 1]"});
  const auto v3 = corrupt("v3_fp8", "grid_v3", [](auto& ts) {
    RawTensor& s = find(ts, "model.layers.2.self_attn.o_proj.weight_scale_inv");
    s.shape = {1, 2};
    s.bytes.resize(8);
  });
  expect_error_naming(v3, {"model.layers.2.self_attn.o_proj.weight_scale_inv", "scale grid [1, 2], expected [1, 1]"});
}

TEST(QuantizedCheckpointErrors, MissingScaleNamesTheWeight) {
  const auto dir = corrupt("v4_fp8_fp4", "missing", [](auto& ts) {
    ts.erase(std::find_if(ts.begin(), ts.end(), [](const RawTensor& t) { return t.name == "layers.1.ffn.experts.2.w3.scale"; }));
  });
  expect_error_naming(dir, {"'layers.1.ffn.experts.2.w3.weight' is quantized", "layers.1.ffn.experts.2.w3.scale"});
}

TEST(QuantizedCheckpointErrors, WrongDtypesNameTheTensor) {
  const auto scale = corrupt("v4_fp8_fp4", "scale_dtype", [](auto& ts) {
    RawTensor& s = find(ts, "layers.2.attn.wkv.scale");
    s.dtype = "U8";
  });
  expect_error_naming(scale, {"layers.2.attn.wkv.scale", "dtype U8, expected F8_E8M0 or F32"});
  const auto weight = corrupt("v4_fp8_fp4", "weight_dtype", [](auto& ts) { find(ts, "layers.2.attn.wo_b.weight").dtype = "F8_E5M2"; });
  expect_error_naming(weight, {"layers.2.attn.wo_b.weight", "F8_E5M2"});
  // An fp4 expert stored unpacked ([out, in] bytes) does not have the packed shape.
  const auto fp4 = corrupt("v4_fp8_fp4", "fp4_shape", [](auto& ts) {
    RawTensor& w = find(ts, "layers.0.ffn.experts.1.w1.weight");
    w.shape = {32, 64};
    w.bytes.resize(32 * 64);
  });
  expect_error_naming(fp4, {"layers.0.ffn.experts.1.w1.weight", "shape [32, 64], expected [32, 32]"});
}

TEST(QuantConfig, UnsupportedQuantizationIsAnErrorNamingTheField) {
  json c = config_of(quant_dir("v4_fp8_fp4", "quantized"));
  c["quantization_config"]["quant_method"] = "awq";
  auto r = engine::deepseek_v4::parse_config(c);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("quantization_config.quant_method"), std::string::npos) << r.status().message();
  c = config_of(quant_dir("v4_fp8_fp4", "quantized"));
  c["quantization_config"]["weight_block_size"] = {128};
  r = engine::deepseek_v4::parse_config(c);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("weight_block_size"), std::string::npos) << r.status().message();
  c = config_of(quant_dir("v4_fp8_fp4", "quantized"));
  c["expert_dtype"] = "int4";
  r = engine::deepseek_v4::parse_config(c);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("expert_dtype"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace di::test
