// Exact re-encoding of DeepSeek-V4's FP4 experts (e2m1 codes, one ue8m0 scale per 32 inputs) as
// fp8 e4m3 with one fp32 scale per 1 x 128 of a row, for Hopper, which has fp8 but no fp4 tensor
// cores. The CUDA loader runs it at load; it lives on the CPU so the proof (a test over every
// code and scale) needs no GPU. Never rounds: a block it cannot carry exactly is an error.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "kernels/weight_format.h"

namespace di::kernels::cpu {

// Inputs per fp32 scale of the re-encoded weight: four fp4 groups.
constexpr int64_t kFp8ReencodeBlock = 128;

// The e4m3 byte whose value is exactly `v`, or false when e4m3 cannot hold v exactly.
bool e4m3_encode_exact(float v, uint8_t* out);

// One block of up to 128 inputs of one row: `n` packed codes from `packed` (element 0 in the low
// nibble of byte 0) and their ceil(n / 32) ue8m0 scales. The block scale is
// 2^(max exponent - 127 - 6), so the largest code (6) times the largest sub-scale lands on
// 6 * 2^6 = 384 <= 448 and a sub-scale d binades lower puts 0.5 on 2^(5 - d): exact while
// d <= 14 (e4m3's smallest subnormal is 2^-9; 1.5 needs 3 * 2^-9 at d = 14). Returns false
// when a value does not fit (a wider spread with small codes, or a NaN scale).
bool reencode_fp4_block(const uint8_t* packed, const uint8_t* ue8m0, int64_t n, uint8_t* e4m3, float* scale);

// A whole kFp4E2M1Group32 weight into `data` [out, in] e4m3 and `scale` [out, ceil(in / 128)]
// fp32; `result` describes them (kFp8E4M3Block, block 1 x 128, fp32 scales). An inexact block
// is an error naming `name`, the row and the block.
Status reencode_fp4_as_fp8(const LinearWeight& w, const std::string& name, uint8_t* data, float* scale,
                           LinearWeight* result);

}  // namespace di::kernels::cpu
