// The element types the CUDA kernels store activations, weights and caches in. Math is always
// fp32; bf16 is the storage type of real checkpoints, fp32 runs the fp32 fixtures exactly.
// Host-only header (no cuda_runtime.h), so engine code can name a dtype without nvcc.
#pragma once

#include <cstdint>

namespace di::kernels::cuda {

enum class DType : int32_t { kF32 = 0, kBF16 = 1 };

inline int64_t dtype_bytes(DType t) { return t == DType::kF32 ? 4 : 2; }
inline const char* dtype_label(DType t) { return t == DType::kF32 ? "float32" : "bfloat16"; }

}  // namespace di::kernels::cuda
