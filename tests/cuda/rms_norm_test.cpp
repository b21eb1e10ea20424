// The models' RMSNorm (kernels/cuda/elementwise.h, bf16 storage) against a float64 CPU
// reference, on fresh random inputs of several shapes, with the output poisoned first so an
// unwritten element fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "tests/cuda/bf16_bits.h"
#include "tests/cuda/cuda_suite.h"
#include "kernels/cuda/elementwise.h"

namespace {

constexpr auto kBF16 = di::kernels::cuda::DType::kBF16;

using di::test::from_bf16;
using di::test::to_bf16;

class CudaRmsNorm : public di::test::CudaTestWithParam<std::pair<int, int>> {};

TEST_P(CudaRmsNorm, MatchesFloat64Reference) {
  const auto [rows, dim] = GetParam();
  std::mt19937 rng(rows * 7919 + dim);
  std::normal_distribution<float> nd(0.f, 2.f);
  std::vector<uint16_t> x(size_t(rows) * dim), w(dim), y(x.size(), 0x7fc1 /* NaN poison */);
  for (auto& v : x) v = to_bf16(nd(rng));
  for (auto& v : w) v = to_bf16(1.f + 0.5f * nd(rng));
  const float eps = 1e-6f;

  uint16_t *dx, *dw, *dy;
  ASSERT_EQ(cudaMalloc(&dx, x.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dw, w.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, y.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dy, y.data(), y.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  auto st = di::kernels::cuda::rms_norm(dx, dw, dy, rows, 1, dim, dim, eps, kBF16, nullptr);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, y.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);

  double num = 0, den = 0;
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int i = 0; i < dim; ++i) ss += double(from_bf16(x[size_t(r) * dim + i])) * from_bf16(x[size_t(r) * dim + i]);
    const double inv = 1.0 / std::sqrt(ss / dim + eps);
    for (int i = 0; i < dim; ++i) {
      const size_t k = size_t(r) * dim + i;
      const double ref = from_bf16(x[k]) * inv * from_bf16(w[i]);
      const double got = from_bf16(y[k]);
      ASSERT_FALSE(std::isnan(got)) << "unwritten or NaN at row " << r << " col " << i;
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  }
  const double rel = std::sqrt(num / den);
  EXPECT_LT(rel, 1e-2) << "relative error " << rel;
  EXPECT_GT(rel, 0.0) << "bf16 output cannot be exact; a zero error means the check is broken";
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaRmsNorm,
                         ::testing::Values(std::make_pair(1, 64), std::make_pair(3, 1000),
                                           std::make_pair(17, 4096), std::make_pair(64, 7168),
                                           std::make_pair(5, 33)));

TEST(CudaRmsNormArgs, RejectsBadShape) {
  auto st = di::kernels::cuda::rms_norm(nullptr, nullptr, nullptr, 1, 1, 0, 0, 1e-6f, kBF16, nullptr);
  EXPECT_FALSE(st.is_ok());
  EXPECT_TRUE(di::kernels::cuda::rms_norm(nullptr, nullptr, nullptr, 0, 1, 8, 8, 1e-6f, kBF16, nullptr).is_ok());
}

}  // namespace
