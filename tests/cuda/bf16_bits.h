// bf16 on the host for the CUDA tests: the bits of a float rounded to nearest even (what
// __float2bfloat16 does for finite values) and back.
#pragma once

#include <cstdint>
#include <cstring>

namespace di::test {

inline uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

inline float from_bf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// `v` rounded to the nearest bf16, as a float.
inline float round_bf16(float v) { return from_bf16(to_bf16(v)); }

}  // namespace di::test
