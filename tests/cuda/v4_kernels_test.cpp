// The deepseek_v4 CUDA kernels one at a time against the CPU model's own functions on random
// inputs: interleaved rope (YaRN, partial, inverse), mHC (pre with Sinkhorn, post, head) and the
// MoE block (sqrtsoftplus / sigmoid / softmax scores, correction bias, hash table, clipped
// SwiGLU experts). Each prints its max error so one run says which op is off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <random>
#include <vector>

#include "engine/model/deepseek_v4/hyper_connection.h"
#include "engine/model/deepseek_v4/moe.h"
#include "engine/model/deepseek_v4/rope.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/hyper_connection.h"
#include "kernels/cuda/moe_experts.h"
#include "kernels/cuda/moe_grouped.h"
#include "kernels/cuda/moe_routing.h"
#include "kernels/cuda/rope_interleaved.h"
#include "tests/cuda/bf16_bits.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/device_copies.h"

namespace di::test {
namespace {

namespace kc = di::kernels::cuda;
namespace v4 = di::engine::deepseek_v4;

std::vector<float> random_vec(size_t n, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

double max_rel(const std::vector<float>& got, const std::vector<float>& ref) {
  double d = 0, m = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    d = std::max(d, std::fabs(double(got[i]) - ref[i]));
    m = std::max(m, std::fabs(double(ref[i])));
  }
  return m > 0 ? d / m : d;
}

// A V4 hyper-connection problem on random inputs (Sinkhorn iterations and epsilons as the model
// configs set them): the streams, hc_pre's weights, and the CPU's hc_pre of them as the
// reference. Later draws (hc_post's input, hc_head's weights) come from the same `rng`.
struct HcCase {
  HcCase(int hc_mult, int64_t hidden, int64_t num_rows, uint32_t seed) : rng(seed) {
    c.hc_mult = hc_mult;
    c.hidden_size = hidden;
    c.hc_sinkhorn_iters = 20;
    c.hc_eps = 1e-6;
    c.rms_norm_eps = 1e-6;
    rows = num_rows, hc = hc_mult, H = hidden, mix = (2 + hc) * hc, W = hc * H;
    streams = random_vec(rows * W, rng), fn = random_vec(mix * W, rng, -0.05f, 0.05f);
    base = random_vec(mix, rng), scale = random_vec(3, rng, 0.5f, 1.5f);
    collapsed.resize(rows * H), post.resize(rows * hc), comb.resize(rows * hc * hc);
    v4::HcWeights hw{fn.data(), base.data(), scale.data()};
    v4::hc_pre(c, hw, streams.data(), rows, collapsed.data(), post.data(), comb.data());
  }

  // The CPU's hc_head of the streams with the given head weights.
  std::vector<float> head(const std::vector<float>& hfn, const std::vector<float>& hbase,
                          const std::vector<float>& hscale) const {
    v4::DeepseekV4Weights w;
    w.hc_head_fn = hfn.data();
    w.hc_head_base = hbase.data();
    w.hc_head_scale = hscale.data();
    std::vector<float> y(rows * H);
    v4::hc_head(c, w, streams.data(), rows, y.data());
    return y;
  }

  v4::DeepseekV4Config c;
  int64_t rows, hc, H, mix, W;
  std::mt19937 rng;
  std::vector<float> streams, fn, base, scale;
  std::vector<float> collapsed, post, comb;  // the CPU's hc_pre
};

class V4Kernels : public CudaTest {};

TEST_F(V4Kernels, InterleavedRopeMatchesCpuRope) {
  v4::RopeConfig rc;
  rc.rope_type = "yarn";
  rc.rope_theta = 160000.0;
  rc.dim = 16;
  rc.factor = 16.0;
  rc.original_max_position_embeddings = 256;
  rc.attention_factor = 1.2;
  const v4::Rope rope(rc);
  std::mt19937 rng(1);
  const int64_t rows = 7, count = 3, width = 64, pos0 = 1000, step = 4;
  for (bool inverse : {false, true}) {
    std::vector<float> x = random_vec(rows * count * width, rng);
    std::vector<float> ref = x;
    for (int64_t r = 0; r < rows; ++r)
      rope.apply(ref.data() + r * count * width, count, width, width, pos0 + r * step, inverse);
    kc::DeviceBuffer dx = upload(x), inv = upload(rope.inv_freq());
    ASSERT_TRUE(kc::rope_interleaved(dx.as<float>(), rows, count * width, count, width, width, pos0, step,
                                     inv.as<const float>(), rope.dim(), rope.scale(), inverse, nullptr)
                    .is_ok());
    const double err = max_rel(download(dx, x.size()), ref);
    std::printf("rope_interleaved (yarn, %s): max rel err %.3g\n", inverse ? "inverse" : "forward", err);
    EXPECT_LE(err, 1e-6);
  }
}

// A rope's inverse frequencies at base 10000 over `rot` channels.
std::vector<float> rope_inv_freq(int64_t rot) {
  std::vector<float> inv(rot / 2);
  for (size_t i = 0; i < inv.size(); ++i) inv[i] = std::pow(10000.f, -2.f * static_cast<float>(i) / rot);
  return inv;
}

// The fused norm + rope V4 runs on its queries (no weight, 64 heads) and key (kv_norm) has the
// bits of rms_norm followed by rope_interleaved_at.
TEST_F(V4Kernels, FusedNormRopeEqualsNormThenRope) {
  std::mt19937 rng(4);
  const int64_t rows = 3, heads = 4, dim = 512, rot = 64;
  const std::vector<int32_t> pos = {0, 77, 4095};
  const std::vector<float> inv = rope_inv_freq(rot);
  kc::DeviceBuffer dpos = upload(pos), dinv = upload(inv);
  for (const bool weighted : {false, true}) {
    const int64_t h = weighted ? 1 : heads;
    const std::vector<float> x = random_vec(rows * h * dim, rng, -3.f, 3.f), w = random_vec(dim, rng, 0.5f, 1.5f);
    kc::DeviceBuffer a = upload(x), b = upload(x), dw = upload(w);
    const float* wp = weighted ? dw.as<float>() : nullptr;
    ASSERT_TRUE(kc::rms_norm(a.get(), wp, a.get(), rows, h, dim, h * dim, 1e-6f, kc::DType::kF32, nullptr).is_ok());
    const auto* dp = static_cast<const int32_t*>(dpos.get());
    const float* di = dinv.as<float>();
    ASSERT_TRUE(kc::rope_interleaved_at(a.as<float>(), rows, h * dim, h, dim, dim, dp, di, rot, 1.25f, false, nullptr)
                    .is_ok());
    ASSERT_TRUE(
        kc::rms_norm_rope_at(b.as<float>(), wp, rows, h, dim, h * dim, 1e-6f, dp, di, rot, 1.25f, nullptr)
            .is_ok());
    const std::vector<float> ref = download(a, x.size()), got = download(b, x.size());
    EXPECT_EQ(std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)), 0) << (weighted ? "kv" : "q");
  }
}

// The same launch over DeepSeek-V2/V3's latent entry: kv_a_layernorm over the first 512
// channels (norm_dim), then rope over the 64 k_pe channels left unnormed: the bits of rms_norm
// over the latent followed by rope_interleaved_at over the entry.
TEST_F(V4Kernels, FusedNormRopeOverALatentEntryEqualsNormThenRope) {
  std::mt19937 rng(5);
  const int64_t rows = 4, latent = 512, rot = 64, entry = latent + rot;
  const std::vector<int32_t> pos = {0, 1, 900, 4095};
  const std::vector<float> inv = rope_inv_freq(rot);
  kc::DeviceBuffer dpos = upload(pos), dinv = upload(inv);
  const std::vector<float> x = random_vec(rows * entry, rng, -3.f, 3.f), w = random_vec(latent, rng, 0.5f, 1.5f);
  kc::DeviceBuffer a = upload(x), b = upload(x), dw = upload(w);
  const auto* dp = static_cast<const int32_t*>(dpos.get());
  const float* di = dinv.as<float>();
  ASSERT_TRUE(
      kc::rms_norm(a.get(), dw.get(), a.get(), rows, 1, latent, entry, 1e-6f, kc::DType::kF32, nullptr).is_ok());
  ASSERT_TRUE(kc::rope_interleaved_at(a.as<float>(), rows, entry, 1, entry, entry, dp, di, rot, 0.9f, false, nullptr)
                  .is_ok());
  ASSERT_TRUE(kc::rms_norm_rope_at(b.as<float>(), dw.as<float>(), rows, 1, entry, entry, 1e-6f, dp, di, rot, 0.9f,
                                   nullptr, latent)
                  .is_ok());
  const std::vector<float> ref = download(a, x.size()), got = download(b, x.size());
  EXPECT_EQ(std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)), 0);
  // A norm width that reaches into the rotated channels is refused.
  EXPECT_FALSE(kc::rms_norm_rope_at(b.as<float>(), dw.as<float>(), rows, 1, entry, entry, 1e-6f, dp, di, rot, 0.9f,
                                    nullptr, latent + 1)
                   .is_ok());
}

// V4's queries (64 unweighted heads a row) and key (one weighted vector) normed and roped in one
// launch have the bits of two rms_norm_rope_at launches.
TEST_F(V4Kernels, NormRopePairEqualsEachAlone) {
  std::mt19937 rng(6);
  const int64_t rows = 3, heads = 64, dim = 512, rot = 64;
  const std::vector<int32_t> pos = {7, 130, 4095};
  const std::vector<float> inv = rope_inv_freq(rot);
  kc::DeviceBuffer dpos = upload(pos), dinv = upload(inv);
  const std::vector<float> q = random_vec(rows * heads * dim, rng, -3.f, 3.f), k = random_vec(rows * dim, rng, -3.f, 3.f);
  const std::vector<float> w = random_vec(dim, rng, 0.5f, 1.5f);
  kc::DeviceBuffer q1 = upload(q), q2 = upload(q), k1 = upload(k), k2 = upload(k), dw = upload(w);
  const auto* dp = static_cast<const int32_t*>(dpos.get());
  const float* di = dinv.as<float>();
  ASSERT_TRUE(kc::rms_norm_rope_at(q1.as<float>(), nullptr, rows, heads, dim, heads * dim, 1e-6f, dp, di, rot, 1.1f,
                                   nullptr)
                  .is_ok());
  ASSERT_TRUE(
      kc::rms_norm_rope_at(k1.as<float>(), dw.as<float>(), rows, 1, dim, dim, 1e-6f, dp, di, rot, 1.1f, nullptr).is_ok());
  ASSERT_TRUE(kc::rms_norm_rope_pair_at({q2.as<float>(), nullptr, heads, heads * dim}, {k2.as<float>(), dw.as<float>(), 1, dim},
                                        rows, dim, 1e-6f, dp, di, rot, 1.1f, nullptr)
                  .is_ok());
  const std::vector<float> qa = download(q1, q.size()), qb = download(q2, q.size());
  const std::vector<float> ka = download(k1, k.size()), kb = download(k2, k.size());
  EXPECT_EQ(std::memcmp(qa.data(), qb.data(), qa.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(ka.data(), kb.data(), ka.size() * sizeof(float)), 0);
  // A second job without its vectors is refused.
  EXPECT_FALSE(kc::rms_norm_rope_pair_at({q2.as<float>(), nullptr, heads, heads * dim}, {nullptr, nullptr, 1, dim}, rows,
                                         dim, 1e-6f, dp, di, rot, 1.1f, nullptr)
                   .is_ok());
}

TEST_F(V4Kernels, HyperConnectionsMatchCpu) {
  HcCase k(4, 96, 5, 2);
  const int64_t rows = k.rows, hc = k.hc, H = k.H, mix = k.mix, W = k.W;

  auto gemm = kc::Gemm::create(nullptr);
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().message();
  kc::DeviceBuffer ds = upload(k.streams), dfn = upload(k.fn), dbase = upload(k.base), dscale = upload(k.scale);
  kc::DeviceBuffer dn, dmix, dcol, dpost, dcomb;
  ASSERT_TRUE(dn.allocate(rows * W * 4).is_ok());
  ASSERT_TRUE(dmix.allocate(rows * mix * 4).is_ok());
  ASSERT_TRUE(dcol.allocate(rows * H * 4).is_ok());
  ASSERT_TRUE(dpost.allocate(rows * hc * 4).is_ok());
  ASSERT_TRUE(dcomb.allocate(rows * hc * hc * 4).is_ok());
  ASSERT_TRUE(kc::rms_norm(ds.get(), nullptr, dn.get(), rows, 1, W, W, 1e-6f, kc::DType::kF32, nullptr).is_ok());
  ASSERT_TRUE(gemm->linear(dn.get(), rows, W, W, dfn.get(), mix, kc::DType::kF32, dmix.get(), mix, kc::DType::kF32)
                  .is_ok());
  ASSERT_TRUE(kc::hc_pre(dmix.as<float>(), 1, dbase.as<float>(), dscale.as<float>(), ds.as<float>(), rows, 4, H, 20,
                         1e-6f, dcol.as<float>(), dpost.as<float>(), dcomb.as<float>(), nullptr)
                  .is_ok());
  const double e_col = max_rel(download(dcol, k.collapsed.size()), k.collapsed);
  const double e_post = max_rel(download(dpost, k.post.size()), k.post);
  const double e_comb = max_rel(download(dcomb, k.comb.size()), k.comb);
  std::printf("hc_pre: collapsed %.3g, post %.3g, comb (Sinkhorn) %.3g\n", e_col, e_post, e_comb);
  EXPECT_LE(e_col, 1e-5);
  EXPECT_LE(e_post, 1e-5);
  EXPECT_LE(e_comb, 1e-5);

  // hc_post on the CPU's post/comb so this checks the kernel alone.
  const std::vector<float> out = random_vec(rows * H, k.rng);
  std::vector<float> ref = k.streams;
  v4::hc_post(k.c, out.data(), k.post.data(), k.comb.data(), rows, ref.data());
  kc::DeviceBuffer dout = upload(out), dpost2 = upload(k.post), dcomb2 = upload(k.comb), ds2 = upload(k.streams);
  ASSERT_TRUE(kc::hc_post(dout.as<float>(), dpost2.as<float>(), dcomb2.as<float>(), rows, 4, H, ds2.as<float>(), nullptr)
                  .is_ok());
  const double e_post_apply = max_rel(download(ds2, ref.size()), ref);
  std::printf("hc_post: %.3g\n", e_post_apply);
  EXPECT_LE(e_post_apply, 1e-6);

  // hc_head through the same norm + GEMM path the model uses.
  const std::vector<float> hfn = random_vec(hc * W, k.rng, -0.05f, 0.05f), hbase = random_vec(hc, k.rng),
                           hscale = random_vec(1, k.rng, 0.5f, 1.5f);
  const std::vector<float> y = k.head(hfn, hbase, hscale);
  kc::DeviceBuffer dhfn = upload(hfn), dhb = upload(hbase), dhs = upload(hscale), dy;
  ASSERT_TRUE(dy.allocate(rows * H * 4).is_ok());
  ASSERT_TRUE(gemm->linear(dn.get(), rows, W, W, dhfn.get(), hc, kc::DType::kF32, dmix.get(), hc, kc::DType::kF32)
                  .is_ok());
  ASSERT_TRUE(kc::hc_head(dmix.as<float>(), 1, dhb.as<float>(), dhs.as<float>(), ds.as<float>(), rows, 4, H, 1e-6f,
                          dy.as<float>(), nullptr)
                  .is_ok());
  const double e_head = max_rel(download(dy, y.size()), y);
  std::printf("hc_head: %.3g\n", e_head);
  EXPECT_LE(e_head, 1e-5);
}

// hc_post alone on the CPU's post/comb: hc 4 (V4's, its compile-time instance) over a width of
// 16-byte vectors, other hc and a width that is not a multiple of 4 (the scalar path).
TEST_F(V4Kernels, HcPostMatchesCpuForEachStreamCountAndWidth) {
  for (const auto [hc, H] : {std::pair<int, int64_t>{4, 1024}, {3, 98}, {8, 96}, {4, 98}}) {
    HcCase k(hc, H, 6, 11);
    const std::vector<float> out = random_vec(k.rows * H, k.rng);
    std::vector<float> ref = k.streams;
    v4::hc_post(k.c, out.data(), k.post.data(), k.comb.data(), k.rows, ref.data());
    kc::DeviceBuffer dout = upload(out), dpost = upload(k.post), dcomb = upload(k.comb), ds = upload(k.streams);
    ASSERT_TRUE(
        kc::hc_post(dout.as<float>(), dpost.as<float>(), dcomb.as<float>(), k.rows, hc, H, ds.as<float>(), nullptr)
            .is_ok());
    const double e = max_rel(download(ds, ref.size()), ref);
    std::printf("hc_post hc %d, width %lld: %.3g\n", hc, static_cast<long long>(H), e);
    EXPECT_LE(e, 1e-6) << "hc " << hc << " width " << H;
  }
}

// The few-row path the model takes at decode: hc_mix's partial sums over the raw streams, the
// RMS folded into hc_pre / hc_head, rows spread over several blocks (hidden 1024: four slices a
// row). Against the CPU model, and a row's bits alone equal to its bits in the batch. hc 4 is
// V4's (Sinkhorn in one thread); 3 and 8 take the warp and block Sinkhorn paths.
class V4FewRowMixing : public CudaTest, public ::testing::WithParamInterface<int> {};
INSTANTIATE_TEST_SUITE_P(Streams, V4FewRowMixing, ::testing::Values(4, 3, 8));

TEST_P(V4FewRowMixing, MatchesCpuAndIsBatchInvariant) {
  HcCase k(GetParam(), 1024, 5, 3);
  const int64_t rows = k.rows, hc = k.hc, H = k.H, mix = k.mix, W = k.W;
  const std::vector<float> hfn = random_vec(hc * W, k.rng, -0.05f, 0.05f), hbase = random_vec(hc, k.rng),
                           hscale = random_vec(1, k.rng, 0.5f, 1.5f);
  const std::vector<float> y = k.head(hfn, hbase, hscale);

  kc::DeviceBuffer ds = upload(k.streams), dfn = upload(k.fn), dbase = upload(k.base), dscale = upload(k.scale);
  kc::DeviceBuffer dhfn = upload(hfn), dhb = upload(hbase), dhs = upload(hscale);
  ASSERT_TRUE(kc::hc_mix_fits(rows, W, mix, ds.as<float>(), dfn.as<float>()));
  ASSERT_TRUE(kc::hc_mix_fits(rows, W, hc, ds.as<float>(), dhfn.as<float>()));
  EXPECT_FALSE(kc::hc_mix_fits(kc::kHcMixMaxRows + 1, W, mix, ds.as<float>(), dfn.as<float>()));
  EXPECT_FALSE(kc::hc_mix_fits(rows, W + 4, mix, ds.as<float>(), dfn.as<float>()));
  EXPECT_FALSE(kc::hc_mix(ds.as<float>(), kc::kHcMixMaxRows + 1, W, dfn.as<float>(), mix, nullptr, nullptr).is_ok());

  struct Out {
    std::vector<float> col, post, comb, y;
  };
  const int32_t parts = kc::hc_mix_parts(mix), head_parts = kc::hc_mix_parts(hc);
  auto run = [&](int64_t n) {
    kc::DeviceBuffer dmix, dcol, dpost, dcomb, dy;
    EXPECT_TRUE(dmix.allocate(std::max(parts * n * mix, head_parts * n * hc) * 4).is_ok());
    EXPECT_TRUE(dcol.allocate(n * H * 4).is_ok());
    EXPECT_TRUE(dpost.allocate(n * hc * 4).is_ok());
    EXPECT_TRUE(dcomb.allocate(n * hc * hc * 4).is_ok());
    EXPECT_TRUE(dy.allocate(n * H * 4).is_ok());
    EXPECT_TRUE(kc::hc_mix(ds.as<float>(), n, W, dfn.as<float>(), mix, dmix.as<float>(), nullptr).is_ok());
    EXPECT_TRUE(kc::hc_pre(dmix.as<float>(), parts, dbase.as<float>(), dscale.as<float>(), ds.as<float>(), n, hc, H,
                           20, 1e-6f, dcol.as<float>(), dpost.as<float>(), dcomb.as<float>(), nullptr, 1e-6f)
                    .is_ok());
    Out o{download(dcol, n * H), download(dpost, n * hc), download(dcomb, n * hc * hc), {}};
    EXPECT_TRUE(kc::hc_mix(ds.as<float>(), n, W, dhfn.as<float>(), hc, dmix.as<float>(), nullptr).is_ok());
    EXPECT_TRUE(kc::hc_head(dmix.as<float>(), head_parts, dhb.as<float>(), dhs.as<float>(), ds.as<float>(), n, hc, H,
                            1e-6f, dy.as<float>(), nullptr, 1e-6f)
                    .is_ok());
    o.y = download(dy, n * H);
    return o;
  };
  const Out all = run(rows), one = run(1);
  const double e_col = max_rel(all.col, k.collapsed), e_post = max_rel(all.post, k.post),
               e_comb = max_rel(all.comb, k.comb), e_y = max_rel(all.y, y);
  std::printf("few-row hc %d: collapsed %.3g, post %.3g, comb %.3g, head %.3g\n", GetParam(), e_col, e_post, e_comb,
              e_y);
  EXPECT_LE(e_col, 1e-5);
  EXPECT_LE(e_post, 1e-5);
  EXPECT_LE(e_comb, 1e-5);
  EXPECT_LE(e_y, 1e-5);
  auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b, size_t n) {
    return std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0;
  };
  EXPECT_TRUE(same_bits(one.col, all.col, H));
  EXPECT_TRUE(same_bits(one.post, all.post, hc));
  EXPECT_TRUE(same_bits(one.comb, all.comb, hc * hc));
  EXPECT_TRUE(same_bits(one.y, all.y, H));
}

// The model's MoE sequence (router GEMM, moe_route, shared expert, gathered per-expert GEMMs with
// the clipped SwiGLU, weighted scatter-add) against moe_forward.
void check_moe(v4::ScoringFunc score, bool hash, uint32_t seed) {
  v4::DeepseekV4Config c;
  c.hidden_size = 64;
  c.moe_intermediate_size = 48;
  c.n_routed_experts = 8;
  c.num_experts_per_tok = 3;
  c.swiglu_limit = 0.7;  // small enough that the clip bites on random inputs
  c.routed_scaling_factor = 1.5;
  c.scoring_func = score;
  c.vocab_size = 50;
  const int64_t rows = 11, H = c.hidden_size, I = c.moe_intermediate_size, E = c.n_routed_experts,
                K = c.num_experts_per_tok;
  std::mt19937 rng(seed);
  const float ws = 1.f / std::sqrt(float(H));
  const std::vector<float> h = random_vec(rows * H, rng), gate = random_vec(E * H, rng, -ws, ws),
                           bias = random_vec(E, rng, -0.1f, 0.1f);
  std::vector<int32_t> tokens(rows), tid2eid(c.vocab_size * K);
  for (int64_t r = 0; r < rows; ++r) tokens[r] = static_cast<int32_t>((r * 7 + 3) % c.vocab_size);
  for (int64_t i = 0; i < c.vocab_size; ++i)
    for (int64_t k = 0; k < K; ++k) tid2eid[i * K + k] = static_cast<int32_t>((i + 3 * k) % E);
  std::vector<std::vector<float>> w13(E + 1), w1(E + 1), w3(E + 1), w2(E + 1);
  v4::MoeWeights mw;
  mw.gate = gate.data();
  mw.bias = hash ? nullptr : bias.data();
  mw.tid2eid = hash ? tid2eid.data() : nullptr;
  mw.experts.resize(E);
  for (int64_t e = 0; e <= E; ++e) {
    w1[e] = random_vec(I * H, rng, -ws, ws);
    w3[e] = random_vec(I * H, rng, -ws, ws);
    w2[e] = random_vec(H * I, rng, -1.f / std::sqrt(float(I)), 1.f / std::sqrt(float(I)));
    w13[e] = w1[e];
    w13[e].insert(w13[e].end(), w3[e].begin(), w3[e].end());
    v4::ExpertWeights& ew = e < E ? mw.experts[e] : mw.shared;
    ew = {kernels::LinearWeight::dense(w1[e].data(), I, H), kernels::LinearWeight::dense(w2[e].data(), H, I),
          kernels::LinearWeight::dense(w3[e].data(), I, H)};
  }
  std::vector<float> ref(rows * H);
  v4::moe_forward(c, mw, hash, tokens.data(), h.data(), rows, ref.data());

  auto gemm = kc::Gemm::create(nullptr);
  ASSERT_TRUE(gemm.is_ok());
  const kc::DType f32 = kc::DType::kF32;
  kc::DeviceBuffer dh = upload(h), dgate = upload(gate), dbias = upload(bias), dtok = upload(tokens),
                   dtid = upload(tid2eid), dlog, dids, dw, dgu, dact, dout, dgx, dy;
  ASSERT_TRUE(dlog.allocate(rows * E * 4).is_ok());
  ASSERT_TRUE(dids.allocate(rows * K * 4).is_ok());
  ASSERT_TRUE(dw.allocate(rows * K * 4).is_ok());
  ASSERT_TRUE(dgu.allocate(rows * 2 * I * 4).is_ok());
  ASSERT_TRUE(dact.allocate(rows * I * 4).is_ok());
  ASSERT_TRUE(dout.allocate(rows * H * 4).is_ok());
  ASSERT_TRUE(dgx.allocate(rows * H * 4).is_ok());
  ASSERT_TRUE(dy.allocate(rows * H * 4).is_ok());
  std::vector<kc::DeviceBuffer> d13, d2;
  for (int64_t e = 0; e <= E; ++e) {
    d13.push_back(upload(w13[e]));
    d2.push_back(upload(w2[e]));
  }
  ASSERT_TRUE(gemm->linear(dh.get(), rows, H, H, dgate.get(), E, f32, dlog.get(), E, f32).is_ok());
  kc::RoutingArgs r;
  r.logits = dlog.as<float>();
  r.rows = rows;
  r.experts = static_cast<int32_t>(E);
  r.top_k = static_cast<int32_t>(K);
  r.score = score == v4::ScoringFunc::kSqrtSoftplus ? kc::RouterScore::kSqrtSoftplus
            : score == v4::ScoringFunc::kSigmoid    ? kc::RouterScore::kSigmoid
                                                    : kc::RouterScore::kSoftmax;
  r.bias = hash ? nullptr : dbias.as<float>();
  r.tid2eid = hash ? dtid.as<int32_t>() : nullptr;
  r.tokens = dtok.as<int32_t>();
  r.routed_scaling = 1.5f;
  r.expert_ids = dids.as<int32_t>();
  r.expert_weights = dw.as<float>();
  ASSERT_TRUE(kc::moe_route(r, nullptr).is_ok());
  ASSERT_TRUE(gemm->linear(dh.get(), rows, H, H, d13[E].get(), 2 * I, f32, dgu.get(), 2 * I, f32).is_ok());
  ASSERT_TRUE(kc::clamped_swiglu(dgu.as<float>(), rows, I, 0.7f, dact.as<float>(), nullptr).is_ok());
  ASSERT_TRUE(gemm->linear(dact.get(), rows, I, I, d2[E].get(), H, f32, dout.get(), H, f32).is_ok());
  std::vector<int32_t> ids(rows * K);
  std::vector<float> wts(rows * K);
  ASSERT_TRUE(kc::copy_to_host(ids.data(), dids.get(), rows * K * 4).is_ok());
  ASSERT_TRUE(kc::copy_to_host(wts.data(), dw.get(), rows * K * 4).is_ok());
  for (int64_t e = 0; e < E; ++e) {
    std::vector<int32_t> list;
    std::vector<float> lw;
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t k = 0; k < K; ++k)
        if (ids[row * K + k] == e) {
          list.push_back(static_cast<int32_t>(row));
          lw.push_back(wts[row * K + k]);
        }
    if (list.empty()) continue;
    const int64_t n = static_cast<int64_t>(list.size());
    kc::DeviceBuffer dl = upload(list), dlw = upload(lw);
    ASSERT_TRUE(kc::gather_rows(dh.as<float>(), dl.as<int32_t>(), n, H, dgx.as<float>(), nullptr).is_ok());
    ASSERT_TRUE(gemm->linear(dgx.get(), n, H, H, d13[e].get(), 2 * I, f32, dgu.get(), 2 * I, f32).is_ok());
    ASSERT_TRUE(kc::clamped_swiglu(dgu.as<float>(), n, I, 0.7f, dact.as<float>(), nullptr).is_ok());
    ASSERT_TRUE(gemm->linear(dact.get(), n, I, I, d2[e].get(), H, f32, dy.get(), H, f32).is_ok());
    ASSERT_TRUE(kc::scatter_add_rows(dy.as<float>(), dl.as<int32_t>(), dlw.as<float>(), n, H, dout.as<float>(), nullptr)
                    .is_ok());
  }
  const double err = max_rel(download(dout, ref.size()), ref);
  std::printf("moe (score %d, %s): max rel err %.3g\n", static_cast<int>(score), hash ? "hash" : "biased top-k", err);
  EXPECT_LE(err, 1e-5);
}

// The per-expert pieces around the GEMMs, in fp32 and with bf16 outputs: gather (a row taken
// twice, as hash routing may), clipped SwiGLU, weighted scatter-add into repeated rows. Widths
// that are and are not multiples of 4 (the vector and scalar paths).
TEST_F(V4Kernels, ExpertGatherSwigluScatterMatchHostLoops) {
  std::mt19937 rng(21);
  for (const int64_t dim : {int64_t{256}, int64_t{98}}) {
    const int64_t tokens = 9, n = 12;
    const std::vector<int32_t> rows = {3, 0, 8, 3, 1, 7, 2, 5, 4, 6, 0, 8};
    const std::vector<float> x = random_vec(tokens * dim, rng, -3.f, 3.f), w = random_vec(n, rng, 0.f, 1.f);
    const std::vector<float> gu = random_vec(n * 2 * dim, rng, -12.f, 12.f);  // past the limit both ways
    const float limit = 7.f;
    kc::DeviceBuffer dx = upload(x), drows = upload(rows), dw = upload(w), dgu = upload(gu);
    kc::DeviceBuffer dg, dg16, ds, ds16, dy = upload(std::vector<float>(tokens * dim, 0.5f));
    ASSERT_TRUE(dg.allocate(n * dim * 4).is_ok());
    ASSERT_TRUE(dg16.allocate(n * dim * 2).is_ok());
    ASSERT_TRUE(ds.allocate(n * dim * 4).is_ok());
    ASSERT_TRUE(ds16.allocate(n * dim * 2).is_ok());
    ASSERT_TRUE(kc::gather_rows(dx.as<float>(), drows.as<int32_t>(), n, dim, dg.as<float>(), nullptr).is_ok());
    ASSERT_TRUE(kc::gather_rows_bf16(dx.as<float>(), drows.as<int32_t>(), n, dim, dg16.get(), nullptr).is_ok());
    ASSERT_TRUE(kc::clamped_swiglu(dgu.as<float>(), n, dim, limit, ds.as<float>(), nullptr).is_ok());
    ASSERT_TRUE(kc::clamped_swiglu_bf16(dgu.as<float>(), n, dim, limit, ds16.get(), nullptr).is_ok());
    ASSERT_TRUE(kc::scatter_add_rows(dg.as<float>(), drows.as<int32_t>(), dw.as<float>(), n, dim, dy.as<float>(),
                                     nullptr)
                    .is_ok());
    const auto g = download<float>(dg, n * dim), s = download<float>(ds, n * dim), y = download<float>(dy, tokens * dim);
    const auto g16 = download<uint16_t>(dg16, n * dim), s16 = download<uint16_t>(ds16, n * dim);
    std::vector<float> want_y(tokens * dim, 0.5f);
    double swiglu_err = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < dim; ++c) {
        const float v = x[rows[i] * dim + c];
        ASSERT_EQ(g[i * dim + c], v) << "gather " << dim;
        ASSERT_EQ(g16[i * dim + c], to_bf16(v)) << "gather_bf16 " << dim;
        want_y[rows[i] * dim + c] += v * w[i];
        const float gate = std::min(gu[i * 2 * dim + c], limit);
        const float up = std::clamp(gu[i * 2 * dim + dim + c], -limit, limit);
        const double want = gate / (1.0 + std::exp(-double(gate))) * up;
        swiglu_err = std::max(swiglu_err, std::fabs(s[i * dim + c] - want) / (1 + std::fabs(want)));
        EXPECT_LE(std::fabs(from_bf16(s16[i * dim + c]) - want), std::fabs(want) / 256 + 1e-5) << "swiglu_bf16";
      }
    EXPECT_LE(swiglu_err, 1e-6) << "swiglu " << dim;
    EXPECT_LE(max_rel(y, want_y), 1e-6) << "scatter_add " << dim;
  }
}

TEST_F(V4Kernels, MoeSqrtSoftplusBiasedTopKMatchesCpu) { check_moe(v4::ScoringFunc::kSqrtSoftplus, false, 3); }
TEST_F(V4Kernels, MoeSqrtSoftplusHashRoutingMatchesCpu) { check_moe(v4::ScoringFunc::kSqrtSoftplus, true, 4); }
TEST_F(V4Kernels, MoeSigmoidMatchesCpu) { check_moe(v4::ScoringFunc::kSigmoid, false, 5); }
TEST_F(V4Kernels, MoeSoftmaxMatchesCpu) { check_moe(v4::ScoringFunc::kSoftmax, false, 6); }

// e4m3 code -> value (sign, 4 exponent bits biased by 7, 3 mantissa bits; exponent 0 subnormal).
float e4m3_decode(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  const float v = e ? std::ldexp(1.f + m / 8.f, e - 7) : std::ldexp(m / 8.f, -6);
  return (b & 0x80) ? -v : v;
}

// Expert weights as the kernel reads them: bf16, or e4m3 codes with fp32 scales in DeepSeek's
// 128 x 128 grid or the 1 x 128 (VEC128) layout of re-encoded FP4 experts.
enum class ExpertWeights { kBf16, kFp8Blocks, kFp8Rows };

// A matrix [rows, cols] of the given kind: the device copy, its scales, and the values the
// kernel must use (bf16-rounded or dequantized).
struct ExpertMatrix {
  kc::DeviceBuffer data, scale;
  std::vector<float> values;
};

ExpertMatrix expert_matrix(ExpertWeights kind, int64_t rows, int64_t cols, std::mt19937& rng) {
  ExpertMatrix m;
  if (kind == ExpertWeights::kBf16) {
    m.values = random_vec(rows * cols, rng, -0.2f, 0.2f);
    std::vector<uint16_t> b;
    for (float& v : m.values) b.push_back(di::test::to_bf16(v = di::test::round_bf16(v)));
    m.data = upload(b);
    return m;
  }
  // Codes over exponent fields 0..9 (subnormals included) and both signs; scales 2^-9 .. 2^-5 and
  // off-power-of-two ones (V3's weight_scale_inv), so the kernel's scaling is exercised.
  std::uniform_int_distribution<int> exp_field(0, 9), mant(0, 7), sign(0, 1);
  std::vector<uint8_t> codes(rows * cols);
  for (uint8_t& c : codes) c = static_cast<uint8_t>(sign(rng) << 7 | exp_field(rng) << 3 | mant(rng));
  const int64_t kb = (cols + 127) / 128, rb = kind == ExpertWeights::kFp8Blocks ? (rows + 127) / 128 : rows;
  std::vector<float> scales(rb * kb);
  std::uniform_real_distribution<float> sc(0.002f, 0.03f);
  for (float& v : scales) v = sc(rng);
  m.values.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float s = kind == ExpertWeights::kFp8Blocks ? scales[(r / 128) * kb + c / 128] : scales[(c / 128) * rows + r];
      m.values[r * cols + c] = e4m3_decode(codes[r * cols + c]) * s;
    }
  m.data = upload(codes);
  m.scale = upload(scales);
  return m;
}

// The device-grouped experts (grouping, the gate|up and down passes, the combine) against a
// plain loop on the host over the same weights (bf16, or dequantized fp8) and bf16-rounded
// inputs, for the tensor-core path and the CUDA-core one, with a hash-like routing that sends
// some rows to one expert twice and leaves experts empty. I = 192: fp8 scale blocks cut partway, and
// bf16 rows of three 64-wide chunks for the four warps that split k.
void check_grouped_experts(ExpertWeights kind, bool cuda_cores, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t rows = 37, H = 128, I = 192, E = 9, K = 3;
  const float limit = 6.f;
  auto bf = [](float v) { return di::test::round_bf16(v); };
  std::vector<float> x = random_vec(rows * H, rng);
  std::vector<std::vector<float>> w13(E), w2(E);
  std::vector<ExpertMatrix> d13, d2;
  std::vector<const void*> p13, p2;
  std::vector<const float*> s13, s2;
  for (int64_t e = 0; e < E; ++e) {
    d13.push_back(expert_matrix(kind, 2 * I, H, rng));
    d2.push_back(expert_matrix(kind, H, I, rng));
    w13[e] = d13.back().values;
    w2[e] = d2.back().values;
    p13.push_back(d13.back().data.get());
    p2.push_back(d2.back().data.get());
    s13.push_back(d13.back().scale.as<float>());
    s2.push_back(d2.back().scale.as<float>());
  }
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(E - 2));  // expert E-1 stays empty
  std::vector<int32_t> ids(rows * K);
  for (int32_t& id : ids) id = pick(rng);
  ids[K] = ids[K + 1];  // row 1 goes to one expert twice
  std::vector<float> weights = random_vec(rows * K, rng, 0.1f, 1.f);
  std::vector<float> out0 = random_vec(rows * H, rng);  // what the shared expert left

  std::vector<float> ref = out0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int> order(K);
    for (int k = 0; k < K; ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ids[r * K + a] < ids[r * K + b]; });
    for (int k : order) {
      const int e = ids[r * K + k];
      std::vector<float> act(I);
      for (int64_t n = 0; n < I; ++n) {
        double g = 0, u = 0;
        for (int64_t j = 0; j < H; ++j) {
          g += double(w13[e][n * H + j]) * bf(x[r * H + j]);
          u += double(w13[e][(I + n) * H + j]) * bf(x[r * H + j]);
        }
        const float gc = std::min(float(g), limit), uc = std::clamp(float(u), -limit, limit);
        act[n] = bf(gc / (1.0f + std::exp(-gc)) * uc);
      }
      for (int64_t n = 0; n < H; ++n) {
        double y = 0;
        for (int64_t j = 0; j < I; ++j) y += double(w2[e][n * I + j]) * act[j];
        ref[r * H + n] += float(y) * weights[r * K + k];
      }
    }
  }

  kc::DeviceBuffer dx = upload(x), dids = upload(ids), dw = upload(weights), dout = upload(out0);
  kc::DeviceBuffer t13 = upload(p13), t2 = upload(p2), ts13 = upload(s13), ts2 = upload(s2);
  kc::DeviceBuffer offsets, slots, bad, act, y;
  ASSERT_TRUE(offsets.allocate((2 * E + 2) * 4).is_ok());
  ASSERT_TRUE(slots.allocate(rows * K * 4).is_ok());
  ASSERT_TRUE(bad.allocate(4).is_ok());
  ASSERT_TRUE(kc::fill_zero(bad.get(), 4).is_ok());
  ASSERT_TRUE(act.allocate(rows * K * I * 4).is_ok());
  ASSERT_TRUE(y.allocate(rows * K * H * 4).is_ok());
  ASSERT_TRUE(kc::moe_group_pairs(dids.as<int32_t>(), rows * K, E, offsets.as<int32_t>(), slots.as<int32_t>(),
                                  bad.as<int32_t>(), nullptr)
                  .is_ok());
  kc::MoeGroupedArgs g;
  g.x = dx.as<float>();
  g.offsets = offsets.as<int32_t>();
  g.slot_pair = slots.as<int32_t>();
  g.pairs = rows * K;
  g.top_k = K;
  g.experts = E;
  g.hidden = H;
  g.inter = I;
  g.w13 = t13.as<const void*>();
  g.w2 = t2.as<const void*>();
  g.dtype = kc::DType::kBF16;
  g.swiglu_limit = limit;
  g.act = act.as<float>();
  g.y = y.as<float>();
  g.force_cuda_cores = cuda_cores;
  if (kind != ExpertWeights::kBf16) {
    g.fp8 = true;
    g.w13_scale = ts13.as<const float*>();
    g.w2_scale = ts2.as<const float*>();
    g.fp8_block_rows = g.fp8_w2_block_rows = kind == ExpertWeights::kFp8Blocks ? 128 : 1;
  }
  ASSERT_TRUE(kc::moe_grouped_mlp(g, nullptr).is_ok());
  ASSERT_TRUE(kc::moe_combine_pairs(y.as<float>(), dw.as<float>(), dids.as<int32_t>(), rows, K, H, dout.as<float>(),
                                    nullptr)
                  .is_ok());
  const std::vector<float> got = download(dout, rows * H);
  const std::vector<float> flag = download(bad, 1);
  EXPECT_EQ(flag[0], 0.f);
  const double err = max_rel(got, ref);
  const char* what = kind == ExpertWeights::kBf16 ? "bf16" : kind == ExpertWeights::kFp8Blocks ? "fp8 128x128" : "fp8 1x128";
  std::printf("grouped experts (%s, %s): max rel err %.3g\n", what, cuda_cores ? "cuda cores" : "tensor cores", err);
  // fp32 sums in another order, and an activation that may round to the other bf16 neighbour.
  EXPECT_LT(err, 2e-3);
}

TEST_F(V4Kernels, GroupedExpertsOnTensorCoresMatchAHostLoop) { check_grouped_experts(ExpertWeights::kBf16, false, 11); }
TEST_F(V4Kernels, GroupedExpertsOnCudaCoresMatchAHostLoop) { check_grouped_experts(ExpertWeights::kBf16, true, 12); }
TEST_F(V4Kernels, GroupedFp8BlockExpertsOnTensorCoresMatchAHostLoop) {
  check_grouped_experts(ExpertWeights::kFp8Blocks, false, 13);
}
TEST_F(V4Kernels, GroupedFp8BlockExpertsOnCudaCoresMatchAHostLoop) {
  check_grouped_experts(ExpertWeights::kFp8Blocks, true, 14);
}
TEST_F(V4Kernels, GroupedFp8RowExpertsOnTensorCoresMatchAHostLoop) {
  check_grouped_experts(ExpertWeights::kFp8Rows, false, 15);
}
TEST_F(V4Kernels, GroupedFp8RowExpertsOnCudaCoresMatchAHostLoop) {
  check_grouped_experts(ExpertWeights::kFp8Rows, true, 16);
}

}  // namespace
}  // namespace di::test
