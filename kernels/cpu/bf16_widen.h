// bf16 -> fp32, exactly (a bf16 value is the top half of the fp32 one), from bytes that need not be
// 2-byte aligned: a safetensors mapping places tensors at any offset.
#pragma once

#include <cstdint>
#include <cstring>

namespace di::kernels::cpu {

inline void bf16_widen(const uint8_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    std::memcpy(dst + i, &bits, 4);
  }
}

}  // namespace di::kernels::cpu
