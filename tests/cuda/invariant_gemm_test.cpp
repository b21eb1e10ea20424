// Gemm's batch-invariant mode: every row of a product has the same bits whatever M is and
// wherever the row sits among the others (fp32 and bf16 operands, plain and grouped products,
// shapes where cuBLAS's default choice splits K for few rows). The default mode is only
// reported: whether cuBLAS picks another kernel for another M is its own business.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/gemm.h"

namespace di::kernels::cuda {
namespace {

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

// `n` uniform values in [-1, 1) as `t` (fp32 or bf16 bits), from `seed`.
std::vector<uint8_t> random_values(int64_t n, DType t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint8_t> out(static_cast<size_t>(n * dtype_bytes(t)));
  for (int64_t i = 0; i < n; ++i) {
    const float v = u(rng);
    if (t == DType::kF32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      const uint16_t b = to_bf16(v);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  }
  return out;
}

struct Shape {
  int64_t N, K;
  DType in;
  int64_t groups;  // 1: linear; more: linear_batched over groups of N rows each
};

// The rows [r0, r0 + M) of x through `g` alone; compared bit for bit with the same rows of the
// full product. Returns the rows that differ.
int64_t rows_differing(const Gemm& g, const Shape& s, const DeviceBuffer& x, const DeviceBuffer& w,
                       const std::vector<float>& full, int64_t r0, int64_t M) {
  const int64_t width = s.groups * s.K, out = s.groups * s.N, eb = dtype_bytes(s.in);
  DeviceBuffer y;
  EXPECT_TRUE(y.allocate(M * out * 4).is_ok());
  const auto* xp = static_cast<const uint8_t*>(x.get()) + r0 * width * eb;
  Status st = s.groups == 1 ? g.linear(xp, M, s.K, s.K, w.get(), s.N, s.in, y.get(), s.N, DType::kF32)
                            : g.linear_batched(xp, M, s.K, width, s.K, w.get(), s.N, s.N * s.K, s.in, y.get(), out,
                                               s.N, DType::kF32, s.groups);
  EXPECT_TRUE(st.is_ok()) << st.message();
  std::vector<float> got(static_cast<size_t>(M * out));
  EXPECT_TRUE(copy_to_host(got.data(), y.get(), M * out * 4).is_ok());
  int64_t bad = 0;
  for (int64_t r = 0; r < M; ++r)
    bad += std::memcmp(got.data() + r * out, full.data() + (r0 + r) * out, static_cast<size_t>(out * 4)) != 0;
  return bad;
}

// Differing rows over a spread of M and offsets, with `g` in the mode the caller set.
int64_t differing_over_m(const Gemm& g, const Shape& s) {
  constexpr int64_t kRows = 300;
  const int64_t width = s.groups * s.K;
  DeviceBuffer x, w, y;
  const auto hx = random_values(kRows * width, s.in, 1);
  const auto hw = random_values(s.groups * s.N * s.K, s.in, 2);
  EXPECT_TRUE(x.allocate(static_cast<int64_t>(hx.size())).is_ok());
  EXPECT_TRUE(w.allocate(static_cast<int64_t>(hw.size())).is_ok());
  EXPECT_TRUE(copy_to_device(x.get(), hx.data(), static_cast<int64_t>(hx.size())).is_ok());
  EXPECT_TRUE(copy_to_device(w.get(), hw.data(), static_cast<int64_t>(hw.size())).is_ok());
  const int64_t out = s.groups * s.N;
  EXPECT_TRUE(y.allocate(kRows * out * 4).is_ok());
  Status st = s.groups == 1 ? g.linear(x.get(), kRows, s.K, s.K, w.get(), s.N, s.in, y.get(), s.N, DType::kF32)
                            : g.linear_batched(x.get(), kRows, s.K, width, s.K, w.get(), s.N, s.N * s.K, s.in, y.get(),
                                               out, s.N, DType::kF32, s.groups);
  EXPECT_TRUE(st.is_ok()) << st.message();
  std::vector<float> full(static_cast<size_t>(kRows * out));
  EXPECT_TRUE(copy_to_host(full.data(), y.get(), kRows * out * 4).is_ok());
  int64_t bad = 0;
  const int64_t cases[][2] = {{0, 1}, {5, 1}, {299, 1}, {3, 2}, {10, 7}, {0, 8}, {17, 31}, {100, 64}, {1, 129}, {0, 255}};
  for (const auto& c : cases) bad += rows_differing(g, s, x, w, full, c[0], c[1]);
  return bad;
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> kShapes = {
      {96, 64, DType::kF32, 1},   {4096, 4096, DType::kBF16, 1}, {1024, 7168, DType::kBF16, 1},
      {256, 512, DType::kBF16, 1}, {4096, 4096, DType::kF32, 1}, {128, 512, DType::kBF16, 8},
      {40, 72, DType::kBF16, 1},  // odd sizes: alignment below 16 bytes
  };
  return kShapes;
}

TEST(InvariantGemm, EveryRowHasTheSameBitsForAnyM) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto g = Gemm::create(nullptr);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_TRUE(g->set_batch_invariant(true).is_ok());
  EXPECT_TRUE(g->batch_invariant());
  for (const Shape& s : shapes()) {
    EXPECT_EQ(differing_over_m(*g, s), 0) << "N " << s.N << " K " << s.K << " groups " << s.groups << " "
                                          << (s.in == DType::kF32 ? "fp32" : "bf16");
  }
}

TEST(InvariantGemm, DefaultModeIsReportedNotRequired) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto g = Gemm::create(nullptr);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  int64_t total = 0;
  for (const Shape& s : shapes()) {
    const int64_t bad = differing_over_m(*g, s);
    total += bad;
    std::printf("default cuBLAS, N %lld K %lld groups %lld %s: %lld rows of 499 differ with M\n",
                static_cast<long long>(s.N), static_cast<long long>(s.K), static_cast<long long>(s.groups),
                s.in == DType::kF32 ? "fp32" : "bf16", static_cast<long long>(bad));
  }
  std::printf("default cuBLAS: %lld rows differ in all (0 would mean this GPU's choices never split by M)\n",
              static_cast<long long>(total));
}

}  // namespace
}  // namespace di::kernels::cuda
