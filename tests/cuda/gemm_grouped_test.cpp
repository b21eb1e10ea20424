// Gemm::linear_grouped (kernels/cuda/gemm.h): MoE-shaped groups (an empty one, one row, odd row
// counts, a row stride wider than K) against float64 sums of the bf16 operands, each group with
// its own weights, outputs poisoned with NaN first; and with a single group (one linear()).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cuda/gemm.h"
#include "tests/cuda/bf16_bits.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/device_copies.h"

namespace di::test {
namespace {

namespace kc = di::kernels::cuda;

class GemmGrouped : public CudaTest {};

TEST_F(GemmGrouped, EachGroupMatchesFloat64SumsOfItsRoundedOperands) {
  const int64_t K = 320, N = 200, lda = K + 16, ldc = N + 8;
  for (const std::vector<int64_t>& rows : {std::vector<int64_t>{0, 1, 7, 64, 133, 2}, std::vector<int64_t>{37}}) {
    const int64_t G = static_cast<int64_t>(rows.size());
    int64_t total = 0;
    for (int64_t m : rows) total += m;
    std::mt19937 rng(static_cast<uint32_t>(G));
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<uint16_t> x(total * lda), w(G * N * K);
    for (uint16_t& v : x) v = to_bf16(normal(rng));
    for (uint16_t& v : w) v = to_bf16(normal(rng));
    kc::DeviceBuffer dx = upload(x), dw = upload(w), dy = upload(std::vector<float>(total * ldc, NAN));
    auto s = kc::Gemm::create(nullptr);
    ASSERT_TRUE(s.status().is_ok());
    kc::Gemm gemm = std::move(*s);
    std::vector<kc::Gemm::Group> groups;
    int64_t r0 = 0;
    for (int64_t g = 0; g < G; ++g) {
      groups.push_back({static_cast<const uint16_t*>(dx.get()) + r0 * lda, rows[g],
                        static_cast<const uint16_t*>(dw.get()) + g * N * K, dy.as<float>() + r0 * ldc});
      r0 += rows[g];
    }
    ASSERT_TRUE(gemm.linear_grouped(groups, K, lda, N, kc::DType::kBF16, ldc, kc::DType::kF32).is_ok());
    const auto y = download<float>(dy, total * ldc);
    double worst = 0;
    r0 = 0;
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t r = r0; r < r0 + rows[g]; ++r)
        for (int64_t n = 0; n < N; ++n) {
          double want = 0;
          for (int64_t k = 0; k < K; ++k) want += double(from_bf16(x[r * lda + k])) * from_bf16(w[(g * N + n) * K + k]);
          const double d = std::fabs(y[r * ldc + n] - want);
          worst = std::isnan(d) ? INFINITY : std::max(worst, d / (1 + std::fabs(want)));
        }
      r0 += rows[g];
    }
    std::printf("%lld groups: max |d| / (1 + |want|) %.3g (%s)\n", static_cast<long long>(G), worst,
                G == 1                   ? "one linear()"
                : gemm.grouped_refused() ? "cuBLAS refused the grouped GEMM: one linear() per group"
                                         : "cublasGemmGroupedBatchedEx");
    EXPECT_LE(worst, 1e-5);
  }
}

}  // namespace
}  // namespace di::test
