// The fp8 linear kernels (kernels/cuda/fp8_linear.h, fp8_gemm.h) against references written from
// the formats' definitions: the W8A16 product against float64 sums of the dequantized weights,
// the activation quantizer against a CPU round-to-nearest-even over every e4m3 value, the FP4
// re-encoding against the CPU proof (kernels/cpu/fp4_to_fp8.h), and cuBLASLt's block-scaled GEMM
// against float64 sums of the same quantized operands. Outputs are poisoned with NaN first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cpu/fp4_to_fp8.h"
#include "kernels/cuda/device.h"
#include "tests/cuda/bf16_bits.h"
#include "kernels/cuda/fp8_gemm.h"
#include "kernels/cuda/fp8_linear.h"
#include "kernels/weight_format.h"
#include "tests/cuda/cuda_suite.h"

namespace {

namespace kc = di::kernels::cuda;
using di::kernels::e4m3_to_float;

using di::test::from_bf16;
using di::test::to_bf16;

// e4m3 of v, nearest (ties to the even code), saturated to +-448: the rule of the device's
// __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3).
uint8_t e4m3_nearest(float v) {
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const float a = std::fabs(v);
  int best = 0;
  for (int b = 1; b <= 0x7e; ++b) {
    const float d = std::fabs(e4m3_to_float(static_cast<uint8_t>(b)) - a),
                bd = std::fabs(e4m3_to_float(static_cast<uint8_t>(best)) - a);
    if (d < bd || (d == bd && (b & 1) == 0 && (best & 1) == 1)) best = b;
  }
  return static_cast<uint8_t>(sign | best);
}

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count, int fill_byte = 0) : n(count) {
    EXPECT_EQ(cudaMalloc(&p, count * sizeof(T) + 16), cudaSuccess);
    cudaMemset(p, fill_byte, count * sizeof(T) + 16);
  }
  Dev(const std::vector<T>& h) : Dev(h.size()) { cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice); }
  ~Dev() { cudaFree(p); }
  std::vector<T> host() const {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

// A random fp8 weight [N, K] and its scales in the given grid (block_rows 128: row-major
// [N / 128, K / 128]; 1: VEC128, [K / 128][N]).
struct HostFp8 {
  std::vector<uint8_t> q;
  std::vector<float> s;
  int64_t N, K;
  int32_t block_rows;
  float scale(int64_t n, int64_t k) const {
    const int64_t kb = k / 128;
    return block_rows == 128 ? s[(n / 128) * ((K + 127) / 128) + kb] : s[kb * N + n];
  }
  float w(int64_t n, int64_t k) const { return e4m3_to_float(q[n * K + k]) * scale(n, k); }
};

HostFp8 random_fp8(int64_t N, int64_t K, int32_t block_rows, std::mt19937& rng, bool pow2) {
  HostFp8 h{std::vector<uint8_t>(N * K), {}, N, K, block_rows};
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : h.q) {
    do b = static_cast<uint8_t>(byte(rng));
    while ((b & 0x7f) == 0x7f);
  }
  const int64_t kb = (K + 127) / 128;
  h.s.resize(block_rows == 128 ? ((N + 127) / 128) * kb : kb * N);
  std::uniform_int_distribution<int> e(-12, -4);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  for (auto& v : h.s) v = pow2 ? std::ldexp(1.0f, e(rng)) : std::ldexp(u(rng), e(rng));
  return h;
}

kc::Fp8Matrix device_matrix(const HostFp8& h, const uint8_t* q, const float* s) {
  kc::Fp8Matrix m;
  m.data = q;
  m.scale = s;
  m.rows = h.N;
  m.cols = h.K;
  m.block_rows = h.block_rows;
  m.scale_row_stride = h.block_rows == 128 ? (h.K + 127) / 128 : 1;
  m.scale_col_stride = h.block_rows == 128 ? 1 : h.N;
  return m;
}

class Fp8Kernels : public di::test::CudaTest {};

// M, N, K, block rows, groups.
using W8A16Case = std::tuple<int64_t, int64_t, int64_t, int32_t, int64_t>;
class Fp8W8A16 : public di::test::CudaTestWithParam<W8A16Case> {};

TEST_P(Fp8W8A16, MatchesFloat64OfTheDequantizedWeights) {
  const auto [M, N, K, block_rows, groups] = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(M * 131 + N * 7 + K + block_rows + groups));
  const HostFp8 w = random_fp8(N, K, block_rows, rng, block_rows == 128);
  // Grouped: group g reads x columns [g * K, (g + 1) * K) of rows groups * K wide.
  const int64_t ldx = groups * K, Nb = N / groups;
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<uint16_t> x(M * ldx);
  for (auto& v : x) v = to_bf16(nd(rng));
  Dev<uint8_t> dq(w.q);
  Dev<float> ds(w.s), dy(M * N, 0xff);
  Dev<uint16_t> dx(x);
  const kc::Fp8Matrix m = device_matrix(w, dq.p, ds.p);
  auto st = kc::fp8_linear_w8a16(dx.p, kc::DType::kBF16, M, ldx, K, m, groups, dy.p, N, Nb, nullptr);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> y = dy.host();
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < M; ++r)
      for (int64_t nb = 0; nb < Nb; ++nb) {
        const int64_t n = g * Nb + nb;
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double t = double(w.w(n, k)) * from_bf16(x[r * ldx + g * K + k]);
          ref += t;
          mag += std::fabs(t);
        }
        const float got = y[r * N + n];
        ASSERT_NEAR(got, ref, 1e-5 * mag + 1e-30) << "group " << g << " row " << r << " col " << nb;
      }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8W8A16,
                         ::testing::Values(W8A16Case{1, 256, 512, 128, 1}, W8A16Case{3, 384, 4096, 128, 1},
                                           W8A16Case{8, 128, 384, 1, 1}, W8A16Case{16, 512, 1024, 128, 1},
                                           W8A16Case{21, 256, 256, 128, 1}, W8A16Case{2, 2048, 512, 128, 8},
                                           W8A16Case{5, 96, 1024, 1, 3},
                                           // CUDA-core kernel: K not a multiple of 64, rows not of 16.
                                           W8A16Case{4, 64, 400, 128, 1}, W8A16Case{2, 40, 256, 128, 1}));

TEST_F(Fp8Kernels, QuantizeRowsMatchesNearestE4m3) {
  const int64_t M = 7, K = 400;  // four blocks, the last 16 wide
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 3.f);
  std::vector<uint16_t> x(M * K);
  for (auto& v : x) v = to_bf16(nd(rng));
  for (int64_t k = 128; k < 256; ++k) x[2 * K + k] = 0;  // an all-zero block: scale 1
  x[4 * K + 5] = to_bf16(448.0f * 64.0f);                 // a power-of-two amax
  for (bool pow2 : {false, true}) {
    Dev<uint16_t> dx(x);
    Dev<uint8_t> dq(M * K, 0xff);
    const int64_t blocks = (K + 127) / 128;
    Dev<float> ds(blocks * M, 0xff);
    auto st = kc::quantize_rows_fp8(dx.p, M, K, K, pow2, dq.p, ds.p, M, nullptr);
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<uint8_t> q = dq.host();
    const std::vector<float> s = ds.host();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t k0 = b * 128, k1 = std::min<int64_t>(K, k0 + 128);
        float amax = 0;
        for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(from_bf16(x[m * K + k])));
        float want = amax > 0 ? amax / 448.0f : 1.0f;
        if (pow2 && amax > 0) {
          int e = 0;
          const float f = std::frexp(want, &e);
          if (f != 0.5f) want = std::ldexp(1.0f, e);
        }
        ASSERT_EQ(s[b * M + m], want) << "row " << m << " block " << b << " pow2 " << pow2;
        for (int64_t k = k0; k < k1; ++k)
          ASSERT_EQ(q[m * K + k], e4m3_nearest(from_bf16(x[m * K + k]) / want))
              << "row " << m << " col " << k << " pow2 " << pow2;
      }
  }
}

TEST_F(Fp8Kernels, Fp4ReencodingEqualsTheCpuProof) {
  const int64_t rows = 24, cols = 512, groups = cols / 32, blocks = cols / 128;
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(0, 255), spread(0, 14);
  std::vector<uint8_t> packed(rows * cols / 2), sc(rows * groups);
  for (auto& b : packed) b = static_cast<uint8_t>(byte(rng));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const int top = 100 + (byte(rng) % 40);
      for (int g = 0; g < 4; ++g) sc[r * groups + b * 4 + g] = static_cast<uint8_t>(top - (g == 0 ? 0 : spread(rng)));
    }
  di::kernels::LinearWeight lw;
  lw.format = di::kernels::WeightFormat::kFp4E2M1Group32;
  lw.data = packed.data();
  lw.scale = sc.data();
  lw.scale_format = di::kernels::ScaleFormat::kUE8M0;
  lw.out = rows;
  lw.in = cols;
  lw.block_out = 1;
  lw.block_in = 32;
  std::vector<uint8_t> cpu_q(rows * cols);
  std::vector<float> cpu_s(rows * blocks);
  di::kernels::LinearWeight out;
  ASSERT_TRUE(di::kernels::cpu::reencode_fp4_as_fp8(lw, "w", cpu_q.data(), cpu_s.data(), &out).is_ok());

  Dev<uint8_t> dp(packed), dsc(sc), dq(rows * cols, 0xff);
  Dev<float> ds(rows * blocks, 0xff);
  Dev<int64_t> bad(1, 0xff);
  auto st = kc::reencode_fp4_to_fp8(dp.p, dsc.p, rows, cols, dq.p, ds.p, bad.p, nullptr);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(bad.host()[0], -1);
  EXPECT_EQ(dq.host(), cpu_q);
  const std::vector<float> s = ds.host();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) ASSERT_EQ(s[b * rows + r], cpu_s[r * blocks + b]) << r << " " << b;

  // Row 5's block 2 spread over 15 binades, with a code that then needs 2^-10; row 9's block 1 a
  // NaN scale: the smallest flat index, 5 * 4 + 2, is reported.
  sc[5 * groups + 8] = 140;
  sc[5 * groups + 9] = 125;
  packed[5 * cols / 2 + (2 * 128 + 32) / 2] = 0x11;  // 0.5 in the spread-out group
  sc[9 * groups + 5] = 0xff;
  Dev<uint8_t> dp2(packed), dsc2(sc);
  Dev<int64_t> bad2(1, 0xff);
  ASSERT_TRUE(kc::reencode_fp4_to_fp8(dp2.p, dsc2.p, rows, cols, dq.p, ds.p, bad2.p, nullptr).is_ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(bad2.host()[0], 5 * blocks + 2);
}

// M, N, K, weight block rows.
using GemmCase = std::tuple<int64_t, int64_t, int64_t, int32_t>;
class Fp8BlockScaledGemm : public di::test::CudaTestWithParam<GemmCase> {};

TEST_P(Fp8BlockScaledGemm, MatchesFloat64OfTheQuantizedOperands) {
  const auto [M, N, K, block_rows] = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(M + N * 3 + K * 5 + block_rows));
  const HostFp8 w = random_fp8(N, K, block_rows, rng, true);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<uint16_t> x(M * K);
  for (auto& v : x) v = to_bf16(nd(rng));
  Dev<uint8_t> dwq(w.q), dxq(M * K, 0xff);
  Dev<float> dws(w.s), dxs(M * (K / 128), 0xff), dy(M * N, 0xff);
  Dev<uint16_t> dx(x);
  const kc::Fp8Matrix m = device_matrix(w, dwq.p, dws.p);
  ASSERT_TRUE(kc::Fp8Gemm::supports(m));
  auto gemm = kc::Fp8Gemm::create(nullptr);
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().message();
  ASSERT_TRUE(kc::quantize_rows_fp8(dx.p, M, K, K, true, dxq.p, dxs.p, M, nullptr).is_ok());
  auto st = gemm->linear(dxq.p, K, dxs.p, M, m, dy.p, N);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint8_t> xq = dxq.host();
  const std::vector<float> xs = dxs.host(), y = dy.host();
  double worst = 0;
  for (int64_t r = 0; r < M; ++r)
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double t = double(w.w(n, k)) * e4m3_to_float(xq[r * K + k]) * xs[(k / 128) * M + r];
        ref += t;
        mag += std::fabs(t);
      }
      const double err = std::fabs(y[r * N + n] - ref) / (mag + 1e-30);
      worst = std::max(worst, std::isnan(err) ? 1e9 : err);
      // The fp8 tensor cores accumulate a 128-wide block in reduced precision before cuBLASLt
      // scales it into fp32 (measured worst ~1.2e-4 of sum |w x|); a wrong scale layout is off by O(1).
      ASSERT_LT(err, 1e-3) << "row " << r << " col " << n << ": " << y[r * N + n] << " vs " << ref;
    }
  std::printf("fp8 block-scaled M=%ld N=%ld K=%ld block_rows=%d: worst error %.2e of sum |w x|\n", long(M), long(N),
              long(K), int(block_rows), worst);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8BlockScaledGemm,
                         ::testing::Values(GemmCase{4, 256, 512, 128}, GemmCase{64, 512, 1024, 128},
                                           GemmCase{132, 384, 512, 128}, GemmCase{260, 256, 2048, 128},
                                           GemmCase{36, 256, 4096, 128}));

TEST_F(Fp8Kernels, GemmRefusesLayoutsCublasLtCannotTake) {
  kc::Fp8Matrix m;
  m.data = reinterpret_cast<const uint8_t*>(uintptr_t{256});
  m.scale = reinterpret_cast<const float*>(uintptr_t{512});
  m.rows = 256;
  m.cols = 256;  // two scale blocks per row: not a multiple of four
  m.block_rows = 128;
  m.scale_row_stride = 2;
  EXPECT_FALSE(kc::Fp8Gemm::supports(m));
  m.cols = 512;
  m.scale_row_stride = 4;
  EXPECT_TRUE(kc::Fp8Gemm::supports(m));
  // 1 x 128 weight scales (the re-encoded FP4 experts): cuBLASLt on sm_90 has no algorithm for
  // VEC128 x VEC128, so those take the dequantize-then-bf16 path.
  m.block_rows = 1;
  m.scale_row_stride = 1;
  m.scale_col_stride = 256;
  EXPECT_FALSE(kc::Fp8Gemm::supports(m));
}

}  // namespace
