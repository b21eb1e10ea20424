// The absorbed MLA query's two halves from one projected q row, in one launch: q_nope rounded to
// bf16 as the operand of the per-head key up-projection GEMM, and q_pe (already roped) copied to
// the rope channels of the latent-space query, which the GEMM fills up to kv_lora_rank. A
// DeepSeek-V2/V3 decode layer did this as a conversion and a strided copy, two graph nodes of a
// few microseconds each. Pure copies and one rounding (nearest even): bit-equal to the two.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// q [rows, heads, nope + rope] fp32 -> q16 [rows, heads, nope + rope] bf16 (only each head's
// first `nope` channels written; null: none, an fp32 model) and qlat [rows, heads, latent + rope]
// fp32 (only each head's last `rope` channels written).
Status mla_stage_query(const float* q, int64_t rows, int64_t heads, int64_t nope, int64_t rope, int64_t latent,
                       void* q16, float* qlat, void* stream);

}  // namespace di::kernels::cuda
