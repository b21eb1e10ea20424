// QuantConfig: what config.json says about stored weight formats, for every DeepSeek family:
// `quantization_config` (DeepSeek-V3/R1 and V4: quant_method "fp8", fmt "e4m3", scale_fmt
// "ue8m0" on V4, weight_block_size [128, 128]) and V4's top-level `expert_dtype` ("fp4": routed
// experts are packed e2m1 with per-32 ue8m0 scales). The tensors' own dtypes still decide how a
// tensor is read; this gives the block grid and which formats a checkpoint may contain.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace di::engine {

struct QuantConfig {
  bool fp8 = false;              // quant_method fp8: F8_E4M3 weights with block scales
  std::string scale_fmt;         // "ue8m0" (V4) or "" (V3: fp32 weight_scale_inv)
  int32_t block_out = 128;       // weight_block_size[0]
  int32_t block_in = 128;        // weight_block_size[1]
  std::string expert_dtype;      // "fp4", "fp8" or "" (as the other weights)
  static constexpr int32_t kFp4Group = 32;  // inputs per ue8m0 scale of an fp4 expert weight
};

// Reads quantization_config and expert_dtype; absent means unquantized. Anything other than
// fp8 / e4m3 / ue8m0-or-none / two positive block sizes / fp4|fp8 experts is an error naming
// the field.
Result<QuantConfig> parse_quant_config(const nlohmann::json& config);

}  // namespace di::engine
