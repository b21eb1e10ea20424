// Quantized linear on the CPU. See quant_linear.h. Threads split the output features as the fp32
// linear does; each thread dequantizes a tile of 64 weight rows into its own buffer and runs the
// fp32 block kernel on it, so the summation order (and the result) is the fp32 path's.
#include "kernels/cpu/quant_linear.h"

#include <vector>

#include "kernels/cpu/bf16_widen.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/threads.h"

namespace di::kernels::cpu {

void dequantize_rows(const LinearWeight& w, int64_t row0, int64_t count, float* dst) {
  const int64_t in = w.in, scols = w.scale_cols();
  for (int64_t r = 0; r < count; ++r) {
    const int64_t n = row0 + r;
    float* out = dst + r * in;
    const int64_t srow = (n / w.block_out) * scols;
    switch (w.format) {
      case WeightFormat::kF32: {
        const float* src = w.f32() + n * in;
        for (int64_t k = 0; k < in; ++k) out[k] = src[k];
        break;
      }
      case WeightFormat::kBf16:
        bf16_widen(static_cast<const uint8_t*>(w.data) + n * in * 2, in, out);
        break;
      case WeightFormat::kFp8E4M3Block: {
        const uint8_t* src = static_cast<const uint8_t*>(w.data) + n * in;
        for (int64_t k0 = 0; k0 < in; k0 += w.block_in) {
          const float s = scale_value(w, srow + k0 / w.block_in);
          const int64_t k1 = k0 + w.block_in < in ? k0 + w.block_in : in;
          for (int64_t k = k0; k < k1; ++k) out[k] = e4m3_to_float(src[k]) * s;
        }
        break;
      }
      case WeightFormat::kFp4E2M1Group32: {
        const uint8_t* src = static_cast<const uint8_t*>(w.data) + n * (in / 2);
        for (int64_t k0 = 0; k0 < in; k0 += w.block_in) {
          const float s = scale_value(w, srow + k0 / w.block_in);
          const int64_t k1 = k0 + w.block_in < in ? k0 + w.block_in : in;
          for (int64_t k = k0; k < k1; ++k) out[k] = e2m1_to_float(e2m1_code(src, k)) * s;
        }
        break;
      }
    }
  }
}

void linear(const float* x, int64_t rows, const LinearWeight& w, int64_t row0, int64_t out, float* y,
            int64_t x_stride, int64_t y_stride) {
  const int64_t in = w.in;
  if (!w.quantized()) {
    linear(x, rows, in, w.f32() + row0 * in, out, y, x_stride, y_stride);
    return;
  }
  constexpr int64_t kCols = 64;
  auto body = [&](int64_t b0, int64_t b1) {
    thread_local std::vector<float> tile;
    tile.resize(static_cast<size_t>(kCols * in));
    for (int64_t n0 = b0 * kCols; n0 < b1 * kCols && n0 < out; n0 += kCols) {
      const int64_t n1 = n0 + kCols < out ? n0 + kCols : out;
      dequantize_rows(w, row0 + n0, n1 - n0, tile.data());
      linear_serial(x, rows, in, tile.data(), n1 - n0, y + n0, x_stride, y_stride);
    }
  };
  const int64_t blocks = (out + kCols - 1) / kCols;
  if (rows * in * out < (1 << 17)) {
    body(0, blocks);
    return;
  }
  parallel_for(blocks, body);
}

}  // namespace di::kernels::cpu
