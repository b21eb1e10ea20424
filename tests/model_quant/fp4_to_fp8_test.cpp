// Proof that DeepSeek-V4's fp4 experts re-encode exactly as e4m3 with one fp32 scale per 128
// inputs: every e2m1 code under every pair of ue8m0 sub-scales up to 14 binades apart, at every
// absolute scale a ue8m0 byte can hold; and that a wider spread is reported, never rounded.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/fp4_to_fp8.h"
#include "kernels/cpu/quant_linear.h"

namespace di::test {
namespace {

namespace cpu = kernels::cpu;

TEST(Fp4ToFp8, EveryCodeUnderEveryScaleSpreadUpTo14BinadesIsExact) {
  // A block of 128 inputs: group 0 holds the largest scale `top`, group 1 a scale d binades
  // lower carrying the code under test in every position it can take; groups 2 and 3 hold
  // the two extremes 6 and -0.5 at `top` and `top - d`.
  int64_t checked = 0;
  for (int top = 0; top <= 254; ++top)
    for (int d = 0; d <= std::min(14, top); ++d)
      for (int code = 0; code < 16; ++code) {
        uint8_t packed[64], scales[4] = {static_cast<uint8_t>(top), static_cast<uint8_t>(top - d),
                                         static_cast<uint8_t>(top), static_cast<uint8_t>(top - d)};
        for (int k = 0; k < 64; ++k) {
          const int group = (2 * k) / 32;
          const uint8_t c = group == 1 ? static_cast<uint8_t>(code) : group == 0 ? 7 : group == 2 ? 0xf : 0x9;
          packed[k] = static_cast<uint8_t>(c | (c << 4));
        }
        uint8_t e4m3[128];
        float scale = 0;
        ASSERT_TRUE(cpu::reencode_fp4_block(packed, scales, 128, e4m3, &scale))
            << "top " << top << " spread " << d << " code " << code;
        for (int k = 0; k < 128; ++k) {
          const uint8_t c = kernels::e2m1_code(packed, k);
          const double want = static_cast<double>(kernels::e2m1_to_float(c)) * std::ldexp(1.0, scales[k / 32] - 127);
          const double got = static_cast<double>(kernels::e4m3_to_float(e4m3[k])) * scale;
          ASSERT_EQ(got, want) << "top " << top << " spread " << d << " code " << code << " k " << k;
          ASSERT_EQ(std::signbit(got), std::signbit(want));
        }
        ++checked;
      }
  // top < 14 allows spreads 0..top, the other 241 tops 0..14.
  EXPECT_EQ(checked, 16 * (14 * 15 / 2 + 241 * 15))
      << "every (top, spread, code) triple";
}

TEST(Fp4ToFp8, A15BinadeSpreadWithItsSmallestCodesIsRejected) {
  // 0.5 * 2^-15 relative to the block's top needs 2^-10 in e4m3, below its smallest subnormal.
  const uint8_t scales[2] = {140, 125};
  uint8_t block[32] = {};
  for (int k = 0; k < 16; ++k) block[k] = 0x77;   // 6s in group 0
  for (int k = 16; k < 32; ++k) block[k] = 0x11;  // 0.5s in group 1
  uint8_t e4m3[64];
  float scale;
  EXPECT_FALSE(cpu::reencode_fp4_block(block, scales, 64, e4m3, &scale));
  const uint8_t nan_scale[1] = {0xff};
  EXPECT_FALSE(cpu::reencode_fp4_block(block, nan_scale, 32, e4m3, &scale));
}

TEST(Fp4ToFp8, WholeWeightRoundTripsAndNamesTheTensorWhenItCannot) {
  const int64_t out = 5, in = 320;  // 2.5 blocks of 128 per row
  std::mt19937 rng(3);
  std::vector<uint8_t> codes(static_cast<size_t>(out * in / 2)), scales(static_cast<size_t>(out * in / 32));
  for (uint8_t& c : codes) c = static_cast<uint8_t>(rng());
  for (uint8_t& s : scales) s = static_cast<uint8_t>(110 + rng() % 12);
  kernels::LinearWeight w;
  w.format = kernels::WeightFormat::kFp4E2M1Group32;
  w.scale_format = kernels::ScaleFormat::kUE8M0;
  w.data = codes.data();
  w.scale = scales.data();
  w.out = out;
  w.in = in;
  w.block_in = 32;
  std::vector<uint8_t> data(static_cast<size_t>(out * in));
  std::vector<float> fp8_scale(static_cast<size_t>(out * 3));
  kernels::LinearWeight re;
  ASSERT_TRUE(cpu::reencode_fp4_as_fp8(w, "layers.0.ffn.experts.0.w1.weight", data.data(), fp8_scale.data(), &re).is_ok());
  std::vector<float> a(static_cast<size_t>(out * in)), b(a.size());
  cpu::dequantize_rows(w, 0, out, a.data());
  cpu::dequantize_rows(re, 0, out, b.data());
  EXPECT_EQ(a, b);

  scales[7] = 140;  // row 0's inputs [224, 256) now sit 30 binades above its neighbours
  for (int64_t k = 192; k < 224; k += 2) codes[k / 2] = 0x11;
  const Status st = cpu::reencode_fp4_as_fp8(w, "layers.0.ffn.experts.0.w1.weight", data.data(), fp8_scale.data(), &re);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("layers.0.ffn.experts.0.w1.weight"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("row 0, inputs [128, 256)"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace di::test
