// DeviceLinear: one projection's weight on the device, in the model dtype or in fp8 with fp32
// block scales (DeepSeek's FP8 checkpoints as shipped, and their FP4 experts re-encoded to fp8
// exactly at load; Hopper has fp8 tensor cores but no fp4 ones). upload_linear makes one from
// the loader's LinearWeights, straight from the checkpoint mapping. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <span>
#include <string>

#include "base/status.h"
#include "engine/model/cuda/device_weights.h"
#include "kernels/cuda/fp8_linear.h"
#include "kernels/weight_format.h"

namespace di::engine::cuda {

struct DeviceLinear {
  const void* dense = nullptr;   // [out, in] in the model dtype, when not fp8
  kernels::cuda::Fp8Matrix fp8;  // fp8.data set: e4m3 [out, in] with its scales
  int64_t out = 0, in = 0;
  bool is_fp8() const { return fp8.data != nullptr; }
};

// The rows of `parts` stacked in order ([sum of out, in]; one part is one matrix), all in one
// format: fp32 host weights go up in the model dtype; fp8 e4m3 with 128 x 128 ue8m0 or fp32
// scales goes up as is, its scales as fp32 (exact); packed fp4 with per-32 ue8m0 scales is
// re-encoded to e4m3 with 1 x 128 fp32 scales on the device, and a block it cannot carry exactly
// is an error naming `name`. `stream` orders the re-encoding; the call waits for it.
Result<DeviceLinear> upload_linear(DeviceWeights& weights, std::span<const kernels::LinearWeight* const> parts,
                                   const std::string& name, void* stream);

// A random [n, k] weight for benchmarks, drawn on the device from `seed` at the size that keeps
// activations' scale (products of rms ~1 inputs stay rms ~1): bf16 values of std 1 / sqrt(k), or
// with `fp8` e4m3 codes of rms ~1.5 under scales of 1 / (1.5 sqrt(k)), one a 128 x 128 block
// (block_rows 128) or a 1 x 128 slice of a row (block_rows 1).
Result<DeviceLinear> random_linear(DeviceWeights& weights, int64_t n, int64_t k, bool fp8, int32_t block_rows,
                                   uint64_t seed, void* stream);

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
