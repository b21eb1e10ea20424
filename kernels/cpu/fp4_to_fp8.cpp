// FP4 -> FP8 re-encoding. See fp4_to_fp8.h.
#include "kernels/cpu/fp4_to_fp8.h"

#include <cmath>

namespace di::kernels::cpu {

bool e4m3_encode_exact(float v, uint8_t* out) {
  if (std::isnan(v) || std::isinf(v)) return false;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const float a = std::fabs(v);
  if (a == 0.0f) {
    *out = sign;
    return true;
  }
  int e2 = 0;
  const float f = std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
  const int exp = e2 + 6;             // a = (2f) * 2^(e2 - 1), biased exponent e2 - 1 + 7
  if (exp >= 1) {
    const float m = (2.0f * f - 1.0f) * 8.0f;  // 3 mantissa bits
    if (m != std::floor(m) || exp > 15 || (exp == 15 && m > 6.0f)) return false;  // 0x7f is NaN
    *out = static_cast<uint8_t>(sign | (exp << 3) | static_cast<int>(m));
    return true;
  }
  const float m = std::ldexp(a, 9);  // subnormal: a = m * 2^-9, m in 1..7
  if (m != std::floor(m) || m > 7.0f) return false;
  *out = static_cast<uint8_t>(sign | static_cast<int>(m));
  return true;
}

bool reencode_fp4_block(const uint8_t* packed, const uint8_t* ue8m0, int64_t n, uint8_t* e4m3, float* scale) {
  const int64_t groups = (n + 31) / 32;
  int top = 0;
  for (int64_t g = 0; g < groups; ++g) {
    if (ue8m0[g] == 0xff) return false;
    if (ue8m0[g] > top) top = ue8m0[g];
  }
  const int shift = top - 127 - 6;  // >= -133, an fp32 (sub)normal power of two
  *scale = std::ldexp(1.0f, shift);
  for (int64_t k = 0; k < n; ++k) {
    // code * 2^(b - 127) / 2^shift = code * 2^(b - top + 6): a power-of-two rescale, exact in fp32.
    const float v = std::ldexp(e2m1_to_float(e2m1_code(packed, k)), ue8m0[k / 32] - top + 6);
    if (!e4m3_encode_exact(v, &e4m3[k])) return false;
  }
  return true;
}

Status reencode_fp4_as_fp8(const LinearWeight& w, const std::string& name, uint8_t* data, float* scale,
                           LinearWeight* result) {
  if (w.format != WeightFormat::kFp4E2M1Group32 || w.scale_format != ScaleFormat::kUE8M0 || w.block_in != 32)
    return Status::invalid_argument("tensor '" + name + "': re-encoding to fp8 needs packed fp4 with ue8m0 per 32");
  const int64_t blocks = (w.in + kFp8ReencodeBlock - 1) / kFp8ReencodeBlock, groups = w.scale_cols();
  const auto* codes = static_cast<const uint8_t*>(w.data);
  const auto* scales = static_cast<const uint8_t*>(w.scale);
  for (int64_t r = 0; r < w.out; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t k0 = b * kFp8ReencodeBlock;
      const int64_t n = k0 + kFp8ReencodeBlock < w.in ? kFp8ReencodeBlock : w.in - k0;
      if (!reencode_fp4_block(codes + r * (w.in / 2) + k0 / 2, scales + r * groups + k0 / 32, n,
                              data + r * w.in + k0, scale + r * blocks + b))
        return Status::invalid_argument("tensor '" + name + "': row " + std::to_string(r) + ", inputs [" +
                                        std::to_string(k0) + ", " + std::to_string(k0 + n) +
                                        "): its fp4 scales span more than 14 binades (or one is NaN), so "
                                        "e4m3 with one scale cannot hold the block exactly");
    }
  *result = LinearWeight{};
  result->format = WeightFormat::kFp8E4M3Block;
  result->data = data;
  result->scale = scale;
  result->scale_format = ScaleFormat::kF32;
  result->out = w.out;
  result->in = w.in;
  result->block_out = 1;
  result->block_in = static_cast<int32_t>(kFp8ReencodeBlock);
  return Status::ok();
}

}  // namespace di::kernels::cpu
