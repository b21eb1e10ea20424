// moe_route's DeepSeek-V2/V3 modes (softmax greedy, softmax group-limited greedy, sigmoid +
// correction bias + group top-k noaux_tc, with and without norm_topk_prob) against the CPU
// router of the deepseek_v2 family (moe.cpp's route_token) on random router logits, through
// both kernels (a warp per token up to 256 experts, a block per token) and at V2-Lite's 64,
// V3's 256 and a 320-expert width past the warp kernel's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/model/deepseek_v2/moe.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/moe_routing.h"
#include "tests/cuda/cuda_suite.h"

namespace di::test {
namespace {
namespace kc = di::kernels::cuda;
namespace v2 = di::engine::deepseek_v2;

struct Mode {
  v2::Routing routing;
  bool norm_topk_prob;
  int32_t experts = 64;
  bool force_block = false;
};

class MlaRouting : public CudaTestWithParam<Mode> {};

TEST_P(MlaRouting, MatchesCpuRouterOnRandomLogits) {
  const Mode mode = GetParam();
  v2::MlaConfig c;
  c.n_routed_experts = mode.experts;
  c.num_experts_per_tok = mode.experts >= 256 ? 8 : 6;
  c.n_group = 8;
  c.topk_group = mode.experts >= 256 ? 4 : 3;
  c.routing = mode.routing;
  c.norm_topk_prob = mode.norm_topk_prob;
  c.routed_scaling_factor = 2.5;
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok, rows = 257;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 2.f);
  std::vector<float> logits(rows * E), bias(E);
  for (float& x : logits) x = normal(rng);
  for (float& x : bias) x = 0.1f * normal(rng);
  v2::MoeWeights m;
  m.e_score_correction_bias = bias.data();

  kc::DeviceBuffer dlog, dbias, dids, dw;
  ASSERT_TRUE(dlog.allocate(rows * E * 4).is_ok());
  ASSERT_TRUE(dbias.allocate(E * 4).is_ok());
  ASSERT_TRUE(dids.allocate(rows * K * 4).is_ok());
  ASSERT_TRUE(dw.allocate(rows * K * 4).is_ok());
  ASSERT_TRUE(kc::copy_to_device(dlog.get(), logits.data(), rows * E * 4).is_ok());
  ASSERT_TRUE(kc::copy_to_device(dbias.get(), bias.data(), E * 4).is_ok());
  const bool v3 = mode.routing == v2::Routing::kSigmoidNoAux;
  kc::RoutingArgs r;
  r.logits = dlog.as<float>();
  r.rows = rows;
  r.experts = static_cast<int32_t>(E);
  r.top_k = static_cast<int32_t>(K);
  r.score = v3 ? kc::RouterScore::kSigmoid : kc::RouterScore::kSoftmax;
  r.bias = v3 ? dbias.as<float>() : nullptr;
  if (mode.routing != v2::Routing::kSoftmaxGreedy) {
    r.n_group = c.n_group;
    r.topk_group = c.topk_group;
  }
  r.group_score = v3 ? kc::GroupScore::kTop2Sum : kc::GroupScore::kMax;
  r.normalize = v3 && c.norm_topk_prob;
  r.routed_scaling = static_cast<float>(c.routed_scaling_factor);
  r.expert_ids = dids.as<int32_t>();
  r.expert_weights = dw.as<float>();
  r.force_block = mode.force_block;
  ASSERT_TRUE(kc::moe_route(r, nullptr).is_ok());
  std::vector<int32_t> ids(rows * K);
  std::vector<float> wts(rows * K);
  ASSERT_TRUE(kc::copy_to_host(ids.data(), dids.get(), rows * K * 4).is_ok());
  ASSERT_TRUE(kc::copy_to_host(wts.data(), dw.get(), rows * K * 4).is_ok());

  int64_t id_mismatch = 0;
  double worst = 0;
  std::vector<int32_t> ref_ids(K);
  std::vector<float> ref_w(K);
  for (int64_t row = 0; row < rows; ++row) {
    v2::route_token(c, m, logits.data() + row * E, ref_ids.data(), ref_w.data());
    for (int64_t k = 0; k < K; ++k) {
      id_mismatch += ids[row * K + k] != ref_ids[k];
      worst = std::max(worst, std::fabs(double(wts[row * K + k]) - ref_w[k]) / (std::fabs(ref_w[k]) + 1e-12));
    }
  }
  std::printf("routing %d norm %d, %d experts%s: expert id mismatches %lld, worst weight rel err %.3g\n",
              static_cast<int>(mode.routing), mode.norm_topk_prob, mode.experts, mode.force_block ? " (block)" : "",
              static_cast<long long>(id_mismatch), worst);
  EXPECT_EQ(id_mismatch, 0);
  EXPECT_LE(worst, 1e-5);
}

std::vector<Mode> modes() {
  std::vector<Mode> out;
  for (const Mode base : {Mode{v2::Routing::kSoftmaxGreedy, false}, Mode{v2::Routing::kSoftmaxGroupLimited, false},
                          Mode{v2::Routing::kSigmoidNoAux, true}, Mode{v2::Routing::kSigmoidNoAux, false}})
    for (const auto& [experts, force_block] : {std::pair{64, false}, {64, true}, {256, false}, {320, false}}) {
      Mode m = base;
      m.experts = experts;
      m.force_block = force_block;
      out.push_back(m);
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Modes, MlaRouting, ::testing::ValuesIn(modes()));

TEST(MlaRoutingArgs, BadGroupingIsRejected) {
  kc::RoutingArgs r;
  r.rows = 1;
  r.experts = 10;
  r.top_k = 2;
  r.n_group = 3;  // does not divide 10
  const Status st = kc::moe_route(r, nullptr);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("n_group"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace di::test
