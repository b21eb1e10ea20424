// upload_linear: see device_linear.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/device_linear.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/model/cuda/weight_upload.h"
#include "kernels/cpu/quant_linear.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/fp8_linear.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;
using kernels::LinearWeight;
using kernels::WeightFormat;

namespace {

Result<DeviceLinear> upload_dense(DeviceWeights& weights, std::span<const LinearWeight* const> parts, int64_t out,
                                  int64_t in) {
  DeviceLinear d;
  d.out = out;
  d.in = in;
  if (parts.size() == 1) {
    DI_ASSIGN_OR_RETURN(d.dense, weights.put(parts[0]->f32(), out * in));
    return d;
  }
  std::vector<float> stacked(static_cast<size_t>(out * in));
  int64_t row = 0;
  for (const LinearWeight* p : parts) {
    std::memcpy(stacked.data() + row * in, p->f32(), static_cast<size_t>(p->out * in) * 4);
    row += p->out;
  }
  DI_ASSIGN_OR_RETURN(d.dense, weights.put(stacked.data(), out * in));
  return d;
}

// BF16 as stored: a bf16 model takes the mapping's bytes straight up (no host copy); an fp32 one
// (exactness fixtures) widens them first.
Result<DeviceLinear> upload_bf16(DeviceWeights& weights, std::span<const LinearWeight* const> parts, int64_t out,
                                 int64_t in) {
  DeviceLinear d;
  d.out = out;
  d.in = in;
  if (weights.dtype() == kc::DType::kBF16) {
    DI_ASSIGN_OR_RETURN(void* dst, weights.allocate(out * in * 2));
    int64_t row = 0;
    for (const LinearWeight* p : parts) {
      DI_RETURN_IF_ERROR(upload_to_device(static_cast<uint8_t*>(dst) + row * in * 2, p->data, p->out * in * 2));
      row += p->out;
    }
    d.dense = dst;
    return d;
  }
  std::vector<float> wide(static_cast<size_t>(out * in));
  int64_t row = 0;
  for (const LinearWeight* p : parts) {
    kernels::cpu::dequantize_rows(*p, 0, p->out, wide.data() + row * in);
    row += p->out;
  }
  DI_ASSIGN_OR_RETURN(d.dense, weights.put(wide.data(), out * in));
  return d;
}

// DeepSeek's 128 x 128 grid: codes as they are, scales made fp32 on the host (a few per 16k codes).
// Parts stacked at row counts that split a 128-row block (small models) keep a scale per row
// instead (the 1 x 128 layout), which is the same values.
Result<DeviceLinear> upload_fp8(DeviceWeights& weights, std::span<const LinearWeight* const> parts, int64_t out,
                                int64_t in, const std::string& name) {
  const int64_t scale_cols = (in + kc::kFp8BlockCols - 1) / kc::kFp8BlockCols;
  bool whole_blocks = true;
  for (const LinearWeight* p : parts) {
    if (p->block_out != 128 || p->block_in != 128)
      return Status::unsupported("tensor '" + name + "': fp8 weights on CUDA need 128 x 128 scale blocks (got " +
                                 std::to_string(p->block_out) + " x " + std::to_string(p->block_in) + ")");
    whole_blocks &= parts.size() == 1 || p->out % 128 == 0;
  }
  DI_ASSIGN_OR_RETURN(void* codes, weights.allocate(out * in));
  std::vector<float> scales(static_cast<size_t>(whole_blocks ? (out + 127) / 128 * scale_cols : out * scale_cols));
  int64_t row = 0, block_row = 0;
  for (const LinearWeight* p : parts) {
    DI_RETURN_IF_ERROR(upload_to_device(static_cast<uint8_t*>(codes) + row * in, p->data, p->out * in));
    if (whole_blocks) {
      const int64_t n = p->scale_rows() * scale_cols;
      for (int64_t i = 0; i < n; ++i) scales[block_row * scale_cols + i] = kernels::scale_value(*p, i);
      block_row += p->scale_rows();
    } else {
      for (int64_t r = 0; r < p->out; ++r)
        for (int64_t b = 0; b < scale_cols; ++b)
          scales[b * out + row + r] = kernels::scale_value(*p, (r / 128) * scale_cols + b);
    }
    row += p->out;
  }
  DI_ASSIGN_OR_RETURN(const float* s, weights.put_f32(scales.data(), static_cast<int64_t>(scales.size())));
  DeviceLinear d;
  d.out = out;
  d.in = in;
  d.fp8.data = static_cast<const uint8_t*>(codes);
  d.fp8.scale = s;
  d.fp8.rows = out;
  d.fp8.cols = in;
  d.fp8.block_rows = whole_blocks ? 128 : 1;
  d.fp8.scale_row_stride = whole_blocks ? scale_cols : 1;
  d.fp8.scale_col_stride = whole_blocks ? 1 : out;
  return d;
}

// Packed fp4 with per-32 ue8m0 scales: both go up as they are and are re-encoded there.
Result<DeviceLinear> upload_fp4(DeviceWeights& weights, std::span<const LinearWeight* const> parts, int64_t out,
                                int64_t in, const std::string& name, void* stream) {
  if (in % 32 != 0)
    return Status::unsupported("tensor '" + name + "': fp4 weights on CUDA need a multiple of 32 inputs, not " +
                               std::to_string(in));
  const int64_t groups = in / 32, blocks = (in + kc::kFp8BlockCols - 1) / kc::kFp8BlockCols;
  kc::DeviceBuffer packed, sub_scales, inexact;
  DI_RETURN_IF_ERROR(packed.allocate(out * in / 2));
  DI_RETURN_IF_ERROR(sub_scales.allocate(out * groups));
  DI_RETURN_IF_ERROR(inexact.allocate(8));
  int64_t row = 0;
  for (const LinearWeight* p : parts) {
    if (p->block_out != 1 || p->block_in != 32 || p->scale_format != kernels::ScaleFormat::kUE8M0)
      return Status::unsupported("tensor '" + name + "': fp4 weights on CUDA need ue8m0 scales per 1 x 32");
    DI_RETURN_IF_ERROR(upload_to_device(packed.as<uint8_t>() + row * in / 2, p->data, p->out * in / 2));
    DI_RETURN_IF_ERROR(upload_to_device(sub_scales.as<uint8_t>() + row * groups, p->scale, p->out * groups));
    row += p->out;
  }
  const int64_t none = -1;
  DI_RETURN_IF_ERROR(kc::copy_to_device(inexact.get(), &none, 8));
  DI_ASSIGN_OR_RETURN(void* codes, weights.allocate(out * in));
  DI_ASSIGN_OR_RETURN(void* scales, weights.allocate(blocks * out * 4));
  DI_RETURN_IF_ERROR(kc::reencode_fp4_to_fp8(packed.as<uint8_t>(), sub_scales.as<uint8_t>(), out, in,
                                             static_cast<uint8_t*>(codes), static_cast<float*>(scales),
                                             inexact.as<int64_t>(), stream));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream));
  int64_t bad = -1;
  DI_RETURN_IF_ERROR(kc::copy_to_host(&bad, inexact.get(), 8));
  if (bad >= 0)
    return Status::invalid_argument("tensor '" + name + "': row " + std::to_string(bad / blocks) + ", inputs [" +
                                    std::to_string(bad % blocks * 128) + ", " +
                                    std::to_string(bad % blocks * 128 + 128) +
                                    "): its fp4 scales span more than 14 binades (or one is NaN), so e4m3 with one "
                                    "scale cannot hold the block exactly");
  DeviceLinear d;
  d.out = out;
  d.in = in;
  d.fp8.data = static_cast<const uint8_t*>(codes);
  d.fp8.scale = static_cast<const float*>(scales);
  d.fp8.rows = out;
  d.fp8.cols = in;
  d.fp8.block_rows = 1;
  d.fp8.scale_row_stride = 1;
  d.fp8.scale_col_stride = out;
  return d;
}

}  // namespace

Result<DeviceLinear> upload_linear(DeviceWeights& weights, std::span<const LinearWeight* const> parts,
                                   const std::string& name, void* stream) {
  if (parts.empty()) return Status::invalid_argument("upload_linear: no parts for '" + name + "'");
  const WeightFormat format = parts[0]->format;
  const int64_t in = parts[0]->in;
  int64_t out = 0;
  for (const LinearWeight* p : parts) {
    if (p->format != format || p->in != in)
      return Status::invalid_argument("tensor '" + name + "': its stacked parts differ in format or width");
    out += p->out;
  }
  switch (format) {
    case WeightFormat::kF32:
      return upload_dense(weights, parts, out, in);
    case WeightFormat::kFp8E4M3Block:
      return upload_fp8(weights, parts, out, in, name);
    case WeightFormat::kFp4E2M1Group32:
      return upload_fp4(weights, parts, out, in, name, stream);
    case WeightFormat::kBf16:
      return upload_bf16(weights, parts, out, in);
  }
  return Status::internal("upload_linear: unknown weight format");
}

Result<DeviceLinear> random_linear(DeviceWeights& weights, int64_t n, int64_t k, bool fp8, int32_t block_rows,
                                   uint64_t seed, void* stream) {
  DeviceLinear d;
  d.out = n;
  d.in = k;
  if (!fp8) {
    DI_ASSIGN_OR_RETURN(void* p, weights.put_random(n * k, 0.f, 1.f / std::sqrt(static_cast<float>(k)), seed, false,
                                                    stream));
    d.dense = p;
    return d;
  }
  const int64_t kb = (k + kc::kFp8BlockCols - 1) / kc::kFp8BlockCols;
  const int64_t scales = block_rows == 1 ? kb * n : (n + 127) / 128 * kb;
  DI_ASSIGN_OR_RETURN(void* codes, weights.allocate(n * k));
  DI_RETURN_IF_ERROR(kc::fill_random_fp8(static_cast<uint8_t*>(codes), n * k, seed, stream));
  DI_ASSIGN_OR_RETURN(void* s, weights.put_random(scales, 1.f / (1.5f * std::sqrt(static_cast<float>(k))), 0.f,
                                                   seed + 0x9e3779b97f4a7c15ull, true, stream));
  d.fp8.data = static_cast<const uint8_t*>(codes);
  d.fp8.scale = static_cast<const float*>(s);
  d.fp8.rows = n;
  d.fp8.cols = k;
  d.fp8.block_rows = block_rows;
  d.fp8.scale_row_stride = block_rows == 1 ? 1 : kb;
  d.fp8.scale_col_stride = block_rows == 1 ? n : 1;
  return d;
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
