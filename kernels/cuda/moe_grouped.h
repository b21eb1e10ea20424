// Routed experts on the device end to end, for steps of few tokens (decode): the (token, k)
// pairs grouped by expert without leaving the GPU, each expert's weights streamed once for all
// its pairs by one launch over every expert (a grouped GEMM on CUDA cores, fp32 accumulation,
// memory-bound at these sizes), DeepSeek's clipped SwiGLU fused into the gate|up pass, and the
// pairs' outputs added to the token rows in expert order, as the CPU models add them. No host
// sync, so a decode step can be captured in a CUDA graph.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// The most experts moe_group_pairs handles.
constexpr int32_t kMaxGroupedExperts = 4096;

// expert_ids [pairs] (pair = row * top_k + k) -> offsets [2 * experts + 2]: expert e owns slots
// offsets[e]..offsets[e+1], then the experts that own any, ascending, and (last) their count;
// and slot_pair [pairs] (the pair in each slot). An id outside
// [0, experts) joins no expert and sets *bad_id to 1 (read it after the step).
Status moe_group_pairs(const int32_t* expert_ids, int64_t pairs, int32_t experts, int32_t* offsets,
                       int32_t* slot_pair, int32_t* bad_id, void* stream);

// The expert MLP's two passes over grouped pairs. w13[e] is expert e's [2 inter, hidden] gate
// then up rows and w2[e] its [hidden, inter] rows, in `dtype` (device arrays of device
// pointers). x rows are token rows (pair / top_k); act and y rows are pairs. For bf16 weights the
// inputs are rounded to bf16 first, as the dense GEMM path does.
struct MoeGroupedArgs {
  const float* x = nullptr;        // [rows, hidden]
  const int32_t* offsets = nullptr;  // as moe_group_pairs leaves them
  const int32_t* slot_pair = nullptr;
  int64_t pairs = 0;
  int32_t top_k = 0;
  int32_t experts = 0;
  int64_t hidden = 0;
  int64_t inter = 0;
  const void* const* w13 = nullptr;
  const void* const* w2 = nullptr;
  DType dtype = DType::kBF16;
  float swiglu_limit = 0.f;  // gate <= limit, |up| <= limit
  float* act = nullptr;      // [pairs, inter] scratch
  float* y = nullptr;        // [pairs, hidden]
  // bf16 weights with hidden and inter multiples of 64 run on the tensor cores (mma.sync, fp32
  // accumulation); true keeps them on the CUDA-core kernel (tests compare the two).
  bool force_cuda_cores = false;
  // fp8 experts: w13[e] / w2[e] point at e4m3 codes and w13_scale[e] / w2_scale[e] at their fp32
  // scales, laid out as Fp8Matrix says for block rows 128 (row-major [rows / 128, in / 128]) or 1
  // (the VEC128 layout [in / 128][rows]): fp8_block_rows for w13, fp8_w2_block_rows for w2 (a
  // gate|up stacked from parts that split a 128-row block keeps a scale per row while its down
  // matrix keeps the grid). `dtype` is then the activations' rounding (bf16
  // models round x to bf16, fp32 ones keep it). hidden and inter multiples of 16; with bf16
  // activations and multiples of 64 they run on the tensor cores too (force_cuda_cores keeps them
  // off), the codes made bf16 in registers.
  bool fp8 = false;
  const float* const* w13_scale = nullptr;
  const float* const* w2_scale = nullptr;
  int32_t fp8_block_rows = 1;
  int32_t fp8_w2_block_rows = 1;
};
Status moe_grouped_mlp(const MoeGroupedArgs& args, void* stream);

// out[r] += sum over k of weights[r, k] * y[r * top_k + k], the pairs of a row taken in
// ascending expert id (ties in k order).
Status moe_combine_pairs(const float* y, const float* weights, const int32_t* expert_ids, int64_t rows, int32_t top_k,
                         int64_t hidden, float* out, void* stream);

}  // namespace di::kernels::cuda
