// gemv_bf16 (kernels/cuda/gemv.h) against float64 sums of the bf16-rounded operands, over the
// shapes that pick each block layout (K of one chunk to many, N below and above a block's rows,
// fp32 and bf16 inputs, beta), plus the promise the engine leans on: a row's result has the same
// bits whatever M is. Outputs are poisoned with NaN first.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemv.h"
#include "tests/cuda/bf16_bits.h"
#include "tests/cuda/cuda_suite.h"

namespace {

namespace kc = di::kernels::cuda;
using di::test::from_bf16;
using di::test::round_bf16;
using di::test::to_bf16;

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) { EXPECT_EQ(cudaMalloc(&p, count * sizeof(T) + 16), cudaSuccess); }
  explicit Dev(const std::vector<T>& h) : Dev(h.size()) {
    cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~Dev() { cudaFree(p); }
  std::vector<T> host() const {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

class Gemv : public di::test::CudaTest {};

struct Case {
  int64_t M, K, N;
  bool f32x;
  float beta;
};

TEST_F(Gemv, MatchesFloat64SumsOfTheRoundedOperands) {
  const std::vector<Case> cases = {{1, 8, 1, true, 0.f},        {1, 264, 37, true, 0.f},   {2, 1024, 4100, false, 0.f},
                                   {3, 2048, 576, true, 0.5f},  {4, 4096, 1024, true, 0.f}, {3, 4104, 333, false, 0.f},
                                   {4, 1024, 32768, true, 0.f}, {2, 512, 96, false, -1.f},  {4, 14336, 64, true, 0.f}};
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const Case& c : cases) {
    const int64_t ldx = c.K + 8, ldy = c.N + 3;
    std::vector<float> x(static_cast<size_t>(c.M * ldx)), y0(static_cast<size_t>(c.M * ldy));
    std::vector<uint16_t> x16(x.size()), w(static_cast<size_t>(c.N * c.K));
    for (size_t i = 0; i < x.size(); ++i) x16[i] = to_bf16(x[i] = normal(rng));
    for (uint16_t& v : w) v = to_bf16(normal(rng) * 0.05f);
    for (float& v : y0) v = normal(rng);
    Dev<float> dx(x), dy(y0);
    Dev<uint16_t> dx16(x16), dw(w);
    if (c.beta == 0.f) cudaMemset(dy.p, 0xff, y0.size() * 4);  // NaN: every output is written
    const void* xp = c.f32x ? static_cast<const void*>(dx.p) : static_cast<const void*>(dx16.p);
    ASSERT_TRUE(kc::gemv_fits(c.M, c.K, ldx, xp, dw.p));
    ASSERT_TRUE(kc::gemv_bf16(xp, c.f32x ? kc::DType::kF32 : kc::DType::kBF16, c.M, c.K, ldx, dw.p, c.N, dy.p, ldy,
                              c.beta, nullptr)
                    .is_ok());
    const std::vector<float> got = dy.host();
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t n = 0; n < c.N; ++n) {
        double s = 0, mag = 0;
        for (int64_t k = 0; k < c.K; ++k) {
          const double t = double(round_bf16(x[m * ldx + k])) * from_bf16(w[n * c.K + k]);
          s += t;
          mag += std::fabs(t);
        }
        if (c.beta != 0.f) s += double(c.beta) * y0[m * ldy + n];
        ASSERT_NEAR(got[m * ldy + n], s, 1e-5 * mag + 1e-6)
            << "M " << c.M << " K " << c.K << " N " << c.N << " at (" << m << ", " << n << ")";
      }
  }
}

TEST_F(Gemv, ARowHasTheSameBitsWhateverMIs) {
  const int64_t K = 4096, N = 3000;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(static_cast<size_t>(kc::kGemvMaxRows * K));
  std::vector<uint16_t> w(static_cast<size_t>(N * K));
  for (float& v : x) v = normal(rng);
  for (uint16_t& v : w) v = to_bf16(normal(rng) * 0.02f);
  Dev<float> dx(x);
  Dev<uint16_t> dw(w);
  std::vector<float> first;
  for (int64_t M = 1; M <= kc::kGemvMaxRows; ++M) {
    Dev<float> dy(static_cast<size_t>(M * N));
    ASSERT_TRUE(kc::gemv_bf16(dx.p, kc::DType::kF32, M, K, K, dw.p, N, dy.p, N, 0.f, nullptr).is_ok());
    const std::vector<float> got = dy.host();
    if (first.empty()) first.assign(got.begin(), got.begin() + N);
    ASSERT_EQ(0, std::memcmp(first.data(), got.data(), static_cast<size_t>(N) * 4)) << "M " << M;
  }
}

TEST_F(Gemv, GemmLinearTakesItForFewBf16RowsAndRefusesWhatDoesNotFit) {
  const int64_t M = 3, K = 1024, N = 700;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint16_t> x(static_cast<size_t>(M * K)), w(static_cast<size_t>(N * K));
  for (uint16_t& v : x) v = to_bf16(normal(rng));
  for (uint16_t& v : w) v = to_bf16(normal(rng) * 0.03f);
  Dev<uint16_t> dx(x), dw(w);
  Dev<float> a(static_cast<size_t>(M * N)), b(static_cast<size_t>(M * N));
  auto gemm = kc::Gemm::create(nullptr);
  ASSERT_TRUE(gemm.status().is_ok());
  ASSERT_TRUE(gemm->linear(dx.p, M, K, K, dw.p, N, kc::DType::kBF16, a.p, N, kc::DType::kF32).is_ok());
  ASSERT_TRUE(kc::gemv_bf16(dx.p, kc::DType::kBF16, M, K, K, dw.p, N, b.p, N, 0.f, nullptr).is_ok());
  EXPECT_EQ(a.host(), b.host());
  // Too many rows, K not a multiple of 8, a misaligned x: not gemv's; a direct call says so.
  EXPECT_FALSE(kc::gemv_fits(kc::kGemvMaxRows + 1, K, K, dx.p, dw.p));
  EXPECT_FALSE(kc::gemv_fits(1, 1020, 1024, dx.p, dw.p));
  EXPECT_FALSE(kc::gemv_fits(1, K, K, dx.p + 1, dw.p));
  EXPECT_FALSE(kc::gemv_bf16(dx.p, kc::DType::kBF16, kc::kGemvMaxRows + 1, K, K, dw.p, N, b.p, N, 0.f, nullptr).is_ok());
}

}  // namespace

namespace {

// The grouped product (V4's output projection at decode: 8 groups of 4096 inputs to 1024 rows)
// equals gemv_bf16 on each group's slice to the bit, and refuses groups a block would straddle.
TEST_F(Gemv, GroupedEqualsOneProductPerGroup) {
  const int64_t groups = 8, K = 4096, per = 1024, N = groups * per;
  std::mt19937 rng(6);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const int64_t M : {1, 2, 4}) {
    std::vector<float> x(static_cast<size_t>(M * groups * K));
    std::vector<uint16_t> w(static_cast<size_t>(N * K));
    for (float& v : x) v = normal(rng);
    for (uint16_t& v : w) v = to_bf16(normal(rng) * 0.02f);
    Dev<float> dx(x), grouped(static_cast<size_t>(M * N)), each(static_cast<size_t>(M * N));
    Dev<uint16_t> dw(w);
    ASSERT_TRUE(kc::gemv_grouped_fits(M, groups, K, N, dx.p, dw.p));
    ASSERT_TRUE(kc::gemv_bf16_grouped(dx.p, M, groups, K, dw.p, N, grouped.p, N, nullptr).is_ok());
    for (int64_t g = 0; g < groups; ++g)
      ASSERT_TRUE(kc::gemv_bf16(dx.p + g * K, kc::DType::kF32, M, K, groups * K, dw.p + g * per * K, per,
                                each.p + g * per, N, 0.f, nullptr)
                      .is_ok());
    const std::vector<float> a = grouped.host(), b = each.host();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "M " << M;
  }
  // K of one chunk: a block is 8 warps of rows, and 1025-row groups would share blocks.
  EXPECT_FALSE(kc::gemv_grouped_fits(1, 3, 256, 3 * 1025, nullptr, nullptr));
  EXPECT_TRUE(kc::gemv_grouped_fits(1, 3, 256, 3 * 1024, nullptr, nullptr));
  EXPECT_FALSE(kc::gemv_bf16_grouped(nullptr, 5, 8, 4096, nullptr, 8192, nullptr, 8192, nullptr).is_ok());
}


// Several products of one x in a launch (a V4 CSA layer's projections of its normed input, with a
// width below a block's rows) equal gemv_bf16 on each alone, to the bit; more products than
// kGemvMaxTargets, or one gemv_fits refuses, are errors.
TEST_F(Gemv, ManyEqualsOneLaunchPerProduct) {
  const int64_t K = 4096;
  const std::vector<int64_t> widths = {1024, 512, 1024, 1024, 256, 256, 64, 3};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const bool f32x : {true, false})
    for (const int64_t M : {1, 2, 4}) {
      std::vector<float> x(static_cast<size_t>(M * K));
      for (float& v : x) v = normal(rng);
      std::vector<uint16_t> x16(x.size());
      for (size_t i = 0; i < x.size(); ++i) x16[i] = to_bf16(x[i]);
      Dev<float> dx(x);
      Dev<uint16_t> dx16(x16);
      const void* xp = f32x ? static_cast<const void*>(dx.p) : static_cast<const void*>(dx16.p);
      const kc::DType xt = f32x ? kc::DType::kF32 : kc::DType::kBF16;
      std::vector<std::unique_ptr<Dev<uint16_t>>> w;
      std::vector<std::unique_ptr<Dev<float>>> many, each;
      std::vector<kc::GemvTarget> targets;
      for (const int64_t N : widths) {
        std::vector<uint16_t> h(static_cast<size_t>(N * K));
        for (uint16_t& v : h) v = to_bf16(normal(rng) * 0.02f);
        w.push_back(std::make_unique<Dev<uint16_t>>(h));
        many.push_back(std::make_unique<Dev<float>>(static_cast<size_t>(M * N)));
        each.push_back(std::make_unique<Dev<float>>(static_cast<size_t>(M * N)));
        targets.push_back({w.back()->p, N, many.back()->p, N});
      }
      ASSERT_TRUE(kc::gemv_bf16_many(xp, xt, M, K, K, targets.data(), static_cast<int>(targets.size()), nullptr).is_ok());
      for (size_t i = 0; i < widths.size(); ++i) {
        ASSERT_TRUE(kc::gemv_bf16(xp, xt, M, K, K, w[i]->p, widths[i], each[i]->p, widths[i], 0.f, nullptr).is_ok());
        const std::vector<float> a = many[i]->host(), b = each[i]->host();
        EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
            << "product " << i << " M " << M << (f32x ? " fp32 x" : " bf16 x");
      }
    }
  kc::GemvTarget nine[9] = {};
  EXPECT_FALSE(kc::gemv_bf16_many(nullptr, kc::DType::kBF16, 1, K, K, nine, 9, nullptr).is_ok());
  EXPECT_FALSE(kc::gemv_bf16_many(nullptr, kc::DType::kBF16, 1, K, K, nine, 0, nullptr).is_ok());
  EXPECT_FALSE(kc::gemv_bf16_many(nullptr, kc::DType::kBF16, 5, K, K, nine, 1, nullptr).is_ok());
}

}  // namespace
