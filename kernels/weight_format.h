// LinearWeight: how one linear layer's weight [out, in] is stored, as plain data a CPU kernel or a
// device upload reads straight from the checkpoint mapping (no fp32 host copy of a quantized
// weight). Formats follow DeepSeek's shipped checkpoints; decoding helpers for the element and
// scale types live here too so every backend agrees on them. Owns nothing.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace di::kernels {

enum class WeightFormat {
  kF32,             // fp32 [out, in]; no scale
  kFp8E4M3Block,    // OCP e4m3 [out, in], one scale per block_out x block_in block (128 x 128)
  kFp4E2M1Group32,  // OCP e2m1, two per byte [out, in / 2], one scale per 1 x 32 group
  kBf16,            // bf16 [out, in] as stored (a device loader's view of the mapping); no scale
};

enum class ScaleFormat {
  kNone,
  kF32,    // DeepSeek-V3/R1's weight_scale_inv: w = q * s
  kUE8M0,  // DeepSeek-V4's F8_E8M0: s = 2^(byte - 127), byte 255 is NaN
};

struct LinearWeight {
  WeightFormat format = WeightFormat::kF32;
  const void* data = nullptr;   // f32 / e4m3 bytes / packed e2m1 bytes, row-major
  const void* scale = nullptr;  // [ceil(out / block_out), ceil(in / block_in)] row-major
  ScaleFormat scale_format = ScaleFormat::kNone;
  int64_t out = 0;
  int64_t in = 0;
  int32_t block_out = 1;  // 128 for fp8, 1 for fp4
  int32_t block_in = 1;   // 128 for fp8, 32 for fp4

  // An fp32 [out, in] matrix (no scale).
  static LinearWeight dense(const float* w, int64_t out, int64_t in) {
    LinearWeight lw;
    lw.data = w;
    lw.out = out;
    lw.in = in;
    return lw;
  }

  bool quantized() const { return format != WeightFormat::kF32; }
  const float* f32() const { return format == WeightFormat::kF32 ? static_cast<const float*>(data) : nullptr; }
  int64_t scale_rows() const { return (out + block_out - 1) / block_out; }
  int64_t scale_cols() const { return (in + block_in - 1) / block_in; }
  // Bytes of the weight as stored (data + scales), what a device copy of it takes.
  int64_t stored_bytes() const {
    const int64_t n = out * in;
    const int64_t d = format == WeightFormat::kF32    ? 4 * n
                      : format == WeightFormat::kBf16 ? 2 * n
                      : format == WeightFormat::kFp8E4M3Block ? n
                                                              : n / 2;
    const int64_t s = scale_format == ScaleFormat::kNone ? 0 : scale_rows() * scale_cols() * (scale_format == ScaleFormat::kF32 ? 4 : 1);
    return d + s;
  }
};

// OCP FP8 e4m3 (the "fn" variant: no infinities, 0x7f/0xff are NaN, max 448), exactly.
inline float e4m3_to_float(uint8_t b) {
  const int sign = b >> 7, exp = (b >> 3) & 0xf, mant = b & 0x7;
  float v;
  if (exp == 0xf && mant == 0x7) v = NAN;
  else if (exp == 0) v = std::ldexp(static_cast<float>(mant), -9);  // subnormal: mant/8 * 2^-6
  else v = std::ldexp(static_cast<float>(8 + mant), exp - 10);      // (1 + mant/8) * 2^(exp-7)
  return sign ? -v : v;
}

// UE8M0 (F8_E8M0): an exponent only, 2^(b - 127); 0xff is NaN. 2^-127 is an fp32 subnormal.
inline float ue8m0_to_float(uint8_t b) {
  if (b == 0xff) return NAN;
  return std::ldexp(1.0f, static_cast<int>(b) - 127);
}

// OCP FP4 e2m1 from the low four bits: sign, 2 exponent bits (bias 1), 1 mantissa bit.
// Values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; no NaN or infinity.
inline float e2m1_to_float(uint8_t nibble) {
  static constexpr float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = kValues[nibble & 0x7];
  return (nibble & 0x8) ? -v : v;
}

// Element k of a packed e2m1 row: byte k / 2, and the FIRST element of a byte is its LOW nibble
// (bits 0-3), the second its high nibble. That is the OCP MX packing and PyTorch's
// float4_e2m1fn_x2 layout, which DeepSeek's reference code reads its I8 [out, in / 2] expert
// weights through; our fixture tool packs the same way (tools/fixtures/gen_quantized.py).
inline uint8_t e2m1_code(const uint8_t* row, int64_t k) {
  const uint8_t b = row[k >> 1];
  return (k & 1) ? static_cast<uint8_t>(b >> 4) : static_cast<uint8_t>(b & 0xf);
}

inline float scale_value(const LinearWeight& w, int64_t index) {
  if (w.scale_format == ScaleFormat::kUE8M0) return ue8m0_to_float(static_cast<const uint8_t*>(w.scale)[index]);
  float s;
  std::memcpy(&s, static_cast<const uint8_t*>(w.scale) + 4 * index, 4);
  return s;
}

}  // namespace di::kernels
