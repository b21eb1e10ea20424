// A DeepSeek-V3 checkpoint with an MTP layer, made here from the deepseek_v3_qlora_yarn fixture
// (transformers' names and config) plus model.layers.3.* drawn from a fixed seed: a decoder
// block named as layer 2's (an MoE layer), enorm, hnorm, eh_proj, shared_head.norm, and
// embed_tokens / shared_head.head as DeepSeek ships them (copies of the main model's). The
// engine tests run on it without PyTorch; tools/mtp_reference/make_fixture.py makes the one
// whose draft logits PyTorch computed.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/model_families/family_fixture.h"

namespace di::test {

struct MtpCheckpointOptions {
  int32_t num_nextn_predict_layers = 1;
  bool store_shared_copies = true;  // write layers.3.embed_tokens / shared_head.head (DeepSeek does)
  std::string drop;                 // a layers.3 tensor to leave out ("" keeps all)
  uint64_t seed = 2027;
};

// splitmix64 + Box-Muller: the same draws on every standard library.
class FixedNormal {
 public:
  explicit FixedNormal(uint64_t seed) : s_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = static_cast<double>(next() >> 11) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t s_;
};

inline RawTensor random_f32(const std::string& name, std::vector<int64_t> shape, FixedNormal& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const bool norm = name.find("norm") != std::string::npos;
  const bool bias = name.find("e_score_correction_bias") != std::string::npos;
  const double std = norm ? 0.2 : bias ? 0.1 : 1.0 / std::sqrt(static_cast<double>(shape.back()));
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>((norm ? 1.0 : 0.0) + std * rng());
  RawTensor t{name, "F32", std::move(shape), std::vector<uint8_t>(v.size() * 4)};
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

// Writes the checkpoint into the scratch folder `scratch` and returns its path.
inline std::string make_v3_mtp_checkpoint(const std::string& scratch, const MtpCheckpointOptions& o = {}) {
  const FixtureId base{"deepseek_v3", "deepseek_v3_qlora_yarn"};
  json config = read_config(base);
  const int32_t L = config.at("num_hidden_layers").get<int32_t>();
  const int64_t H = config.at("hidden_size").get<int64_t>();
  config["num_nextn_predict_layers"] = o.num_nextn_predict_layers;
  std::vector<RawTensor> tensors = read_all(fixture_dir(base));
  const std::string from = "model.layers." + std::to_string(L - 1) + ".", to = "model.layers." + std::to_string(L) + ".";
  FixedNormal rng(o.seed);
  std::vector<RawTensor> mtp;
  const RawTensor* embed = nullptr;
  const RawTensor* head = nullptr;
  for (const RawTensor& t : tensors) {
    if (t.name == "model.embed_tokens.weight") embed = &t;
    if (t.name == "lm_head.weight") head = &t;
    if (t.name.rfind(from, 0) == 0) mtp.push_back(random_f32(to + t.name.substr(from.size()), t.shape, rng));
  }
  for (const char* n : {"enorm.weight", "hnorm.weight", "shared_head.norm.weight"}) mtp.push_back(random_f32(to + n, {H}, rng));
  mtp.push_back(random_f32(to + "eh_proj.weight", {H, 2 * H}, rng));
  if (o.store_shared_copies) {
    RawTensor e = *embed, h = *head;
    e.name = to + "embed_tokens.weight";
    h.name = to + "shared_head.head.weight";
    mtp.push_back(std::move(e));
    mtp.push_back(std::move(h));
  }
  for (RawTensor& t : mtp)
    if (t.name != to + o.drop) tensors.push_back(std::move(t));
  return make_model_dir_in("mla_mtp", scratch, config, tensors);
}

}  // namespace di::test
