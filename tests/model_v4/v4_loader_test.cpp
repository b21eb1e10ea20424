// The safetensors loader and deepseek_v4 weight loading: sharded checkpoints, half-precision
// conversion, MTP tensors, and a clear error for every kind of corrupt checkpoint.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v4/v4_model.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

const char* kFixture = "mixed_yarn_hc2";

std::vector<float> full_logits(const std::string& dir, const Fixture& f) {
  auto m = engine::load_model(dir, {});
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  if (!m.is_ok()) return {};
  return run_chunks(**m, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
}

TEST(SafetensorsLoader, ShardedCheckpointLoadsTheSameWeights) {
  const Fixture f = load_fixture(kFixture);
  const auto tensors = read_all(f.dir);
  const std::string dir = scratch_dir("sharded");
  fs::copy_file(f.dir + "/config.json", dir + "/config.json");
  std::vector<RawTensor> a(tensors.begin(), tensors.begin() + tensors.size() / 2);
  std::vector<RawTensor> b(tensors.begin() + tensors.size() / 2, tensors.end());
  write_safetensors(dir + "/model-00001-of-00002.safetensors", a);
  write_safetensors(dir + "/model-00002-of-00002.safetensors", b);
  json index = {{"metadata", json::object()}, {"weight_map", json::object()}};
  for (const auto& t : a) index["weight_map"][t.name] = "model-00001-of-00002.safetensors";
  for (const auto& t : b) index["weight_map"][t.name] = "model-00002-of-00002.safetensors";
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  EXPECT_EQ(full_logits(dir, f), full_logits(f.dir, f));

  // An index entry pointing at the wrong shard is an error naming the tensor.
  index["weight_map"][a[0].name] = "model-00002-of-00002.safetensors";
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  const Status st = load_status(dir);
  expect_error_mentions(st, a[0].name);
}

uint16_t to_bf16(float x) {  // round to nearest even
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b += 0x7fff + ((b >> 16) & 1);
  return static_cast<uint16_t>(b >> 16);
}

TEST(SafetensorsLoader, Bf16AndF16TensorsConvertExactly) {
  // IEEE bit patterns: 1.0, -2.0, the smallest f16 subnormal (2^-24), f16 65504, +inf.
  const uint16_t f16[] = {0x3c00, 0xc000, 0x0001, 0x7bff, 0x7c00};
  const float f16_want[] = {1.0f, -2.0f, std::ldexp(1.0f, -24), 65504.0f, INFINITY};
  const uint16_t bf16[] = {0x3f80, 0xc000, 0x0001, 0x7f80};
  const float bf16_want[] = {1.0f, -2.0f, std::ldexp(1.0f, -133), INFINITY};
  RawTensor a{"a", "F16", {5}, {}}, b{"b", "BF16", {4}, {}};
  a.bytes.resize(10);
  std::memcpy(a.bytes.data(), f16, 10);
  b.bytes.resize(8);
  std::memcpy(b.bytes.data(), bf16, 8);
  const std::string dir = scratch_dir("halves");
  write_safetensors(dir + "/model.safetensors", {a, b});
  auto ck = engine::Checkpoint::open(dir);
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  auto va = engine::tensor_to_f32(*(*ck)->find("a"));
  auto vb = engine::tensor_to_f32(*(*ck)->find("b"));
  ASSERT_TRUE(va.is_ok() && vb.is_ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*va)[i], f16_want[i]) << i;
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*vb)[i], bf16_want[i]) << i;
}

TEST(SafetensorsLoader, Bf16CheckpointRunsWithRoundedWeights) {
  // The same model stored in BF16 must give the logits of its fp32 weights rounded to BF16:
  // compare against a checkpoint holding those rounded values in F32.
  const Fixture f = load_fixture(kFixture);
  auto tensors = read_all(f.dir);
  std::vector<RawTensor> as_bf16 = tensors, rounded = tensors;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dtype != "F32") continue;
    const size_t n = tensors[i].bytes.size() / 4;
    as_bf16[i].dtype = "BF16";
    as_bf16[i].bytes.resize(2 * n);
    for (size_t k = 0; k < n; ++k) {
      float x;
      std::memcpy(&x, tensors[i].bytes.data() + 4 * k, 4);
      const uint16_t h = to_bf16(x);
      std::memcpy(as_bf16[i].bytes.data() + 2 * k, &h, 2);
      const uint32_t back = static_cast<uint32_t>(h) << 16;
      std::memcpy(rounded[i].bytes.data() + 4 * k, &back, 4);
    }
  }
  const std::string d1 = make_model_dir("bf16", kFixture, as_bf16);
  const std::string d2 = make_model_dir("bf16_rounded", kFixture, rounded);
  const auto l1 = full_logits(d1, f);
  EXPECT_FALSE(l1.empty());
  EXPECT_EQ(l1, full_logits(d2, f));
}

TEST(SafetensorsLoader, TruncatedFileIsAClearError) {
  const Fixture f = load_fixture(kFixture);
  const std::string dir = scratch_dir("truncated");
  fs::copy_file(f.dir + "/config.json", dir + "/config.json");
  fs::copy_file(f.dir + "/model.safetensors", dir + "/model.safetensors");
  fs::resize_file(dir + "/model.safetensors", fs::file_size(dir + "/model.safetensors") - 1000);
  Status st = load_status(dir);
  expect_error_mentions(st, "truncated");
  fs::resize_file(dir + "/model.safetensors", 100);  // inside the header
  st = load_status(dir);
  expect_error_mentions(st, "model.safetensors");
}

TEST(SafetensorsLoader, WrongDtypeIsAClearError) {
  const Fixture f = load_fixture(kFixture);
  auto tensors = read_all(f.dir);
  for (auto& t : tensors)
    if (t.name == "model.layers.1.attn.attn_sink") t.dtype = "I32";  // same size, wrong kind
  const Status st = load_status(make_model_dir("wrong_dtype", kFixture, tensors));
  expect_error_mentions(st, "model.layers.1.attn.attn_sink");
  expect_error_mentions(st, "I32");
}

TEST(SafetensorsLoader, MissingTensorIsAClearError) {
  const Fixture f = load_fixture(kFixture);
  auto tensors = read_all(f.dir);
  std::erase_if(tensors, [](const RawTensor& t) { return t.name == "model.layers.2.ffn.experts.5.w3.weight"; });
  const Status st = load_status(make_model_dir("missing", kFixture, tensors));
  expect_error_mentions(st, "missing tensor 'model.layers.2.ffn.experts.5.w3.weight'");
}

TEST(SafetensorsLoader, ExtraTensorIsAClearError) {
  const Fixture f = load_fixture(kFixture);
  auto tensors = read_all(f.dir);
  tensors.push_back({"model.layers.0.attn.not_a_weight", "F32", {2}, std::vector<uint8_t>(8)});
  const Status st = load_status(make_model_dir("extra", kFixture, tensors));
  expect_error_mentions(st, "unexpected tensor 'model.layers.0.attn.not_a_weight'");
}

TEST(SafetensorsLoader, MisShapedTensorIsAClearError) {
  const Fixture f = load_fixture(kFixture);
  json config = read_config(kFixture);
  config["o_lora_rank"] = 8;  // wo_a / wo_b in the checkpoint are sized for 16
  const Status st = load_status(make_model_dir("misshaped", kFixture, read_all(f.dir), &config));
  expect_error_mentions(st, "attn.wo_a.weight");
  expect_error_mentions(st, "expected [16, 64]");
}

TEST(SafetensorsLoader, MtpTensorsAreKeptWhenTheConfigHasThem) {
  const Fixture f = load_fixture(kFixture);
  auto tensors = read_all(f.dir);
  tensors.push_back({"mtp.0.enorm.weight", "F32", {48}, std::vector<uint8_t>(48 * 4)});
  tensors.push_back({"mtp.0.e_proj.weight", "BF16", {48, 96}, std::vector<uint8_t>(48 * 96 * 2)});
  json config = read_config(kFixture);
  config["num_nextn_predict_layers"] = 1;
  auto m = engine::load_model(make_model_dir("mtp", kFixture, tensors, &config), {});
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const auto& v4 = static_cast<const engine::deepseek_v4::DeepseekV4Model&>(**m);
  EXPECT_EQ(v4.weights().mtp.size(), 2u);
  // Without MTP layers in the config the same tensors are unexpected.
  config["num_nextn_predict_layers"] = 0;
  const Status st = load_status(make_model_dir("mtp_unexpected", kFixture, tensors, &config));
  expect_error_mentions(st, "mtp.0.");
}

TEST(SafetensorsLoader, MissingFilesAreClearErrors) {
  const std::string dir = scratch_dir("empty");
  Status st = load_status(dir);
  expect_error_mentions(st, "config.json");
  fs::copy_file(fixture_dir(kFixture) + "/config.json", dir + "/config.json");
  st = load_status(dir);
  expect_error_mentions(st, "model.safetensors");
}

}  // namespace
}  // namespace di::test
