// The element decoders against fp32 bit patterns built independently, and the fp8 / fp4 linear
// kernels against a plain dequantize-then-matmul reference, on shapes that are not multiples of
// the block.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"

namespace di::test {
namespace {

using kernels::LinearWeight;
using kernels::ScaleFormat;
using kernels::WeightFormat;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Fp8Formats, E4M3DecodesEveryCodeAsItsFp32BitPattern) {
  for (int code = 0; code < 256; ++code) {
    const uint32_t sign = (code >> 7) << 31, exp = (code >> 3) & 15, mant = code & 7;
    const float got = kernels::e4m3_to_float(static_cast<uint8_t>(code));
    if (exp == 15 && mant == 7) {
      EXPECT_TRUE(std::isnan(got)) << code;
      continue;
    }
    float want;
    if (exp == 0) {  // subnormal mant * 2^-9: shift the mantissa up to its leading one
      want = mant == 0 ? from_bits(sign) : (sign ? -1.0f : 1.0f) * static_cast<float>(mant) / 512.0f;
    } else {
      want = from_bits(sign | ((exp - 7 + 127) << 23) | (mant << 20));
    }
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << code;
    EXPECT_EQ(got, want) << code;
  }
  EXPECT_EQ(kernels::e4m3_to_float(0x7e), 448.0f);  // the largest finite e4m3
}

TEST(Fp8Formats, Ue8m0AndE2m1DecodeToTheirDefinitions) {
  for (int b = 0; b < 255; ++b) EXPECT_EQ(kernels::ue8m0_to_float(static_cast<uint8_t>(b)), std::pow(2.0, b - 127)) << b;
  EXPECT_TRUE(std::isnan(kernels::ue8m0_to_float(0xff)));
  // e2m1: exponent bits (bias 1) and one mantissa bit; exponent 0 is subnormal (0 or 0.5).
  for (int c = 0; c < 16; ++c) {
    const int e = (c >> 1) & 3, m = c & 1;
    const double mag = e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, e - 1);
    EXPECT_EQ(kernels::e2m1_to_float(static_cast<uint8_t>(c)), (c & 8) ? -mag : mag) << c;
  }
  const uint8_t packed[2] = {0x21, 0x7f};  // elements 1 (0.5), 2 (1.0), 15 (-6), 7 (6)
  EXPECT_EQ(kernels::e2m1_code(packed, 0), 1);
  EXPECT_EQ(kernels::e2m1_code(packed, 1), 2);
  EXPECT_EQ(kernels::e2m1_code(packed, 2), 15);
  EXPECT_EQ(kernels::e2m1_code(packed, 3), 7);
}

// A random quantized weight with its storage, and the dequantized matrix computed here with
// the simplest loops (scale index (n / block_out, k / block_in)).
struct RandomWeight {
  std::vector<uint8_t> data;
  std::vector<uint8_t> scale;
  LinearWeight w;
  std::vector<float> dense;
};

RandomWeight random_weight(WeightFormat format, ScaleFormat sf, int64_t out, int64_t in, uint32_t seed) {
  std::mt19937 rng(seed);
  RandomWeight r;
  r.w.format = format;
  r.w.scale_format = sf;
  r.w.out = out;
  r.w.in = in;
  r.w.block_out = format == WeightFormat::kFp8E4M3Block ? 128 : 1;
  r.w.block_in = format == WeightFormat::kFp8E4M3Block ? 128 : 32;
  const int64_t srows = r.w.scale_rows(), scols = r.w.scale_cols();
  r.data.resize(static_cast<size_t>(format == WeightFormat::kFp8E4M3Block ? out * in : out * in / 2));
  for (uint8_t& b : r.data) {
    b = static_cast<uint8_t>(rng());
    if (format == WeightFormat::kFp8E4M3Block && (b & 0x7f) == 0x7f) b ^= 1;  // no NaN codes
  }
  r.scale.resize(static_cast<size_t>(srows * scols * (sf == ScaleFormat::kF32 ? 4 : 1)));
  std::vector<float> s(static_cast<size_t>(srows * scols));
  for (int64_t i = 0; i < srows * scols; ++i) {
    if (sf == ScaleFormat::kUE8M0) {
      r.scale[i] = static_cast<uint8_t>(120 + rng() % 8);
      s[i] = std::ldexp(1.0f, r.scale[i] - 127);
    } else {
      s[i] = std::uniform_real_distribution<float>(1e-4f, 1e-2f)(rng);
      std::memcpy(r.scale.data() + 4 * i, &s[i], 4);
    }
  }
  r.w.data = r.data.data();
  r.w.scale = r.scale.data();
  r.dense.resize(static_cast<size_t>(out * in));
  for (int64_t n = 0; n < out; ++n)
    for (int64_t k = 0; k < in; ++k) {
      float q;
      if (format == WeightFormat::kFp8E4M3Block) {
        q = kernels::e4m3_to_float(r.data[n * in + k]);
      } else {
        const uint8_t byte = r.data[n * (in / 2) + k / 2];
        q = kernels::e2m1_to_float(k % 2 ? byte >> 4 : byte & 15);
      }
      r.dense[n * in + k] = q * s[(n / r.w.block_out) * scols + k / r.w.block_in];
    }
  return r;
}

void expect_matches_reference(const RandomWeight& r, int64_t rows, uint32_t seed) {
  const int64_t in = r.w.in, out = r.w.out;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> x(static_cast<size_t>(rows * in));
  for (float& v : x) v = nd(rng);

  std::vector<float> dq(static_cast<size_t>(out * in));
  kernels::cpu::dequantize_rows(r.w, 0, out, dq.data());
  EXPECT_EQ(dq, r.dense) << "dequantize_rows";

  std::vector<float> got(static_cast<size_t>(rows * out)), fp32(got.size());
  kernels::cpu::linear(x.data(), rows, r.w, got.data());
  kernels::cpu::linear(x.data(), rows, in, r.dense.data(), out, fp32.data());
  double worst = 0;
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < out; ++n) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < in; ++k) {
        ref += static_cast<double>(x[m * in + k]) * r.dense[n * in + k];
        mag += std::fabs(static_cast<double>(x[m * in + k]) * r.dense[n * in + k]);
      }
      worst = std::max(worst, std::fabs(got[m * out + n] - ref) / mag);
      // The fp32 path over the dequantized matrix, same summation: equal to the last bit.
      ASSERT_EQ(got[m * out + n], fp32[m * out + n]) << "row " << m << " col " << n;
    }
  EXPECT_LT(worst, 1e-6);

  // A row range (the grouped output projection's slices) equals those columns of the whole.
  const int64_t row0 = out / 3, count = out - out / 3 - 1;
  std::vector<float> part(static_cast<size_t>(rows * count));
  kernels::cpu::linear(x.data(), rows, r.w, row0, count, part.data(), in, count);
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < count; ++n) ASSERT_EQ(part[m * count + n], got[m * out + row0 + n]);
}

TEST(QuantLinear, Fp8Ue8m0BlocksMatchTheDequantizedReference) {
  for (int64_t rows : {1, 3, 6}) {
    expect_matches_reference(random_weight(WeightFormat::kFp8E4M3Block, ScaleFormat::kUE8M0, 200, 300, 1), rows, 2);
    expect_matches_reference(random_weight(WeightFormat::kFp8E4M3Block, ScaleFormat::kUE8M0, 128, 256, 3), rows, 4);
  }
}

TEST(QuantLinear, Fp8Fp32ScalesMatchTheDequantizedReference) {
  for (int64_t rows : {1, 5})
    expect_matches_reference(random_weight(WeightFormat::kFp8E4M3Block, ScaleFormat::kF32, 257, 129, 5), rows, 6);
}

TEST(QuantLinear, Fp4Group32MatchesTheDequantizedReference) {
  for (int64_t rows : {1, 4, 7}) {
    expect_matches_reference(random_weight(WeightFormat::kFp4E2M1Group32, ScaleFormat::kUE8M0, 70, 96, 7), rows, 8);
    expect_matches_reference(random_weight(WeightFormat::kFp4E2M1Group32, ScaleFormat::kUE8M0, 130, 320, 9), rows, 10);
  }
}

TEST(QuantLinear, LargeBatchUsesThreadsAndStaysExact) {
  // rows * in * out above the threading threshold.
  expect_matches_reference(random_weight(WeightFormat::kFp8E4M3Block, ScaleFormat::kUE8M0, 300, 260, 11), 9, 12);
  expect_matches_reference(random_weight(WeightFormat::kFp4E2M1Group32, ScaleFormat::kUE8M0, 300, 256, 13), 9, 14);
}

}  // namespace
}  // namespace di::test
