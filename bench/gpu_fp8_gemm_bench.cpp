// bench_gpu_fp8_gemm: the fp8 linear paths against bf16 cuBLAS on the same shapes, in one run.
// Prefill shapes: cuBLASLt's block-scaled fp8 GEMM (DeepSeek's 128 x 128 weight scales, 1 x 128
// activation scales), alone and with the activation quantization it needs, against the bf16
// cuBLAS GEMM. Decode shapes: the W8A16 kernel's weight-read rate against the measured read
// bandwidth, and against bf16 cuBLAS reading twice the bytes. Prints rows for bench/RESULTS.md.
#include <cuda_runtime.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpu_bench_util.h"
#include "bench/gpu_ceilings.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/fp8_gemm.h"
#include "kernels/cuda/fp8_linear.h"
#include "kernels/cuda/gemm.h"

namespace kc = di::kernels::cuda;
using di::bench::ResultRow;

namespace {

// Median device time of `run` over 20 launches (after two warm-ups), in ms.
double time_ms(const std::function<di::Status()>& run) { return di::bench::must(di::bench::median_event_ms(run, 20)); }

struct Operands {
  kc::DeviceBuffer x16, xq, xs, w16, wq, ws, y;
};

Operands make(int64_t M, int64_t N, int64_t K) {
  Operands o;
  CHECK(o.x16.allocate(M * K * 2));
  CHECK(o.xq.allocate(M * K));
  CHECK(o.xs.allocate(M * (K / 128) * 4));
  CHECK(o.w16.allocate(N * K * 2));
  CHECK(o.wq.allocate(N * K));
  CHECK(o.ws.allocate((N / 128) * (K / 128) * 4));
  CHECK(o.y.allocate(M * N * 4));
  CHECK(kc::fill_uniform(o.x16.get(), M * K, 0.f, 1.f, 1, kc::DType::kBF16, nullptr));
  CHECK(kc::fill_uniform(o.w16.get(), N * K, 0.f, 0.02f, 2, kc::DType::kBF16, nullptr));
  CHECK(kc::fill_random_fp8(o.wq.as<uint8_t>(), N * K, 3, nullptr));
  CHECK(kc::fill_uniform(o.ws.get(), (N / 128) * (K / 128), 0.01f, 0.f, 4, kc::DType::kF32, nullptr));
  return o;
}

kc::Fp8Matrix matrix(const Operands& o, int64_t N, int64_t K) {
  kc::Fp8Matrix m;
  m.data = o.wq.as<uint8_t>();
  m.scale = o.ws.as<float>();
  m.rows = N;
  m.cols = K;
  m.block_rows = 128;
  m.scale_row_stride = K / 128;
  m.scale_col_stride = 1;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const di::bench::BenchArgs args = di::bench::parse_bench_args(argc, argv);
  const double bw = di::bench::must(di::bench::measure_read_bandwidth(int64_t{4} << 30));
  auto gemm = kc::Gemm::create(nullptr);
  CHECK(gemm.status());
  auto fp8 = kc::Fp8Gemm::create(nullptr);
  CHECK(fp8.status());
  std::vector<ResultRow> rows;

  struct Shape {
    int64_t M, N, K;
  };
  for (Shape s : {Shape{8192, 4096, 4096}, Shape{8192, 8192, 4096}, Shape{4096, 4096, 8192}, Shape{2048, 4096, 1024}}) {
    Operands o = make(s.M, s.N, s.K);
    const kc::Fp8Matrix w = matrix(o, s.N, s.K);
    const double bf16_ms = time_ms([&] {
      return gemm->linear(o.x16.get(), s.M, s.K, s.K, o.w16.get(), s.N, kc::DType::kBF16, o.y.get(), s.N,
                         kc::DType::kF32);
    });
    CHECK(kc::quantize_rows_fp8(o.x16.get(), s.M, s.K, s.K, true, o.xq.as<uint8_t>(), o.xs.as<float>(), s.M, nullptr));
    const double fp8_ms = time_ms([&] {
      return fp8->linear(o.xq.as<uint8_t>(), s.K, o.xs.as<float>(), s.M, w, o.y.as<float>(), s.N);
    });
    const double quant_ms = time_ms([&] {
      return kc::quantize_rows_fp8(o.x16.get(), s.M, s.K, s.K, true, o.xq.as<uint8_t>(), o.xs.as<float>(), s.M, nullptr);
    });
    const double fl = 2.0 * s.M * s.N * s.K;
    char what[160], m[200], c[160], r[64];
    std::snprintf(what, sizeof what, "fp8 block-scaled GEMM M=%ld N=%ld K=%ld (fp32 out)", long(s.M), long(s.N),
                  long(s.K));
    std::snprintf(m, sizeof m, "%.3f ms = %.0f TFLOP/s (+ %.3f ms activation quantization: %.0f TFLOP/s together)",
                  fp8_ms, fl / fp8_ms / 1e9, quant_ms, fl / (fp8_ms + quant_ms) / 1e9);
    std::snprintf(c, sizeof c, "bf16 cuBLAS same shape %.3f ms = %.0f TFLOP/s", bf16_ms, fl / bf16_ms / 1e9);
    std::snprintf(r, sizeof r, "%.2fx (%.2fx with quantization)", bf16_ms / fp8_ms, bf16_ms / (fp8_ms + quant_ms));
    rows.push_back({what, m, c, r, "median of 20 by CUDA events; cuBLASLt BLK128x128 weights x VEC128 activations"});
    std::printf("%s: %s | %s | %s\n", what, m, c, r);
  }

  for (Shape s : {Shape{1, 16384, 4096}, Shape{8, 16384, 4096}, Shape{16, 4096, 16384}}) {
    Operands o = make(s.M, s.N, s.K);
    const kc::Fp8Matrix w = matrix(o, s.N, s.K);
    const double w8_ms = time_ms([&] {
      return kc::fp8_linear_w8a16(o.x16.get(), kc::DType::kBF16, s.M, s.K, 0, w, 1, o.y.as<float>(), s.N, 0, nullptr);
    });
    const double cores_ms = time_ms([&] {
      return kc::fp8_linear_w8a16(o.x16.get(), kc::DType::kBF16, s.M, s.K, 0, w, 1, o.y.as<float>(), s.N, 0, nullptr,
                                  /*cuda_cores=*/true);
    });
    const double bf16_ms = time_ms([&] {
      return gemm->linear(o.x16.get(), s.M, s.K, s.K, o.w16.get(), s.N, kc::DType::kBF16, o.y.get(), s.N,
                         kc::DType::kF32);
    });
    const double bytes = double(s.N) * s.K * (1 + 4.0 / (128 * 128)) + s.M * s.K * 2.0 + s.M * s.N * 4.0;
    char what[160], m[160], c[240], r[32];
    std::snprintf(what, sizeof what, "fp8 W8A16 decode product M=%ld N=%ld K=%ld", long(s.M), long(s.N), long(s.K));
    std::snprintf(m, sizeof m, "%.4f ms = %.2f TB/s of weights", w8_ms, bytes / w8_ms / 1e9);
    std::snprintf(c, sizeof c, "read %.2f TB/s; bf16 cuBLAS on 2x the bytes %.4f ms (%.2fx slower); CUDA-core W8A16 %.4f ms",
                  bw / 1e12, bf16_ms, bf16_ms / w8_ms, cores_ms);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * bytes / (w8_ms * 1e-3) / bw);
    rows.push_back({what, m, c, r, "median of 20 by CUDA events; tensor-core W8A16 (codes made bf16 in registers)"});
    std::printf("%s: %s | %s | %s\n", what, m, c, r);
  }
  di::bench::append_rows(args, rows);
  return 0;
}
