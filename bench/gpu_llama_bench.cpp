// bench_gpu_llama: a Llama-3-8B-shaped model (random bf16 weights built on the GPU) through the
// CUDA model: batch-1 and batched decode step time against the read floor, and an 8k-token
// prefill against the GEMM ceiling, with both ceilings measured in the same run (a streaming
// read kernel over 4 GiB; a bf16 8192^3 GEMM). Prints a table and, with --append FILE COMMIT
// DEVICE, appends rows to bench/RESULTS.md. With --deterministic, the same decode steps (B = 1,
// 8, 64) and a 2048-token prefill again on a second model in batch-invariant mode
// (enable_batch_invariance: the engine's deterministic option), and the cost of the mode as the
// ratio of the two (the goal: at most 1.3x).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_bench_util.h"
#include "engine/model/cuda/device_cache.h"
#include "engine/model/llama/llama_cuda_model.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/elementwise.h"
#include "bench/gpu_ceilings.h"
#include "kernels/cuda/gemm.h"

namespace kc = di::kernels::cuda;
using namespace di::engine;

using di::bench::median;
using di::bench::now_ms;
using di::bench::ResultRow;

int main(int argc, char** argv) {
  const di::bench::BenchArgs args = di::bench::parse_bench_args(argc, argv);
  // --profile B: one decode step of batch B (ctx 512) between profiler marks.
  const int profile_batch = args.profile_batch;
  bool compare_deterministic = false;
  for (int i = 1; i < argc; ++i) compare_deterministic |= std::string(argv[i]) == "--deterministic";

  if (profile_batch > 0) {
    ModelOptions po;
    auto pm = llama::LlamaCudaModel::random(di::bench::llama3_8b_shape(), kc::DType::kBF16, 1234, po);
    CHECK(pm.status());
    std::vector<float> logits;
    di::bench::DecodeBatch d = di::bench::prefill_sequences(
        **pm, profile_batch, 600, [](int b) { return std::vector<int32_t>(512, 17 + b); }, logits);
    for (int s = 0; s < 4; ++s) {
      for (std::vector<int32_t>& seq : d.ids) seq.push_back(5 + s);
      ForwardBatch step = d.last_tokens();
      if (s == 3) cudaProfilerStart();
      CHECK((*pm)->forward(step, logits));
      if (s == 3) cudaProfilerStop();
    }
    return 0;
  }
  const double bw = di::bench::must(di::bench::measure_read_bandwidth(int64_t{4} << 30));
  const double flops = di::bench::must(di::bench::measure_gemm_rate(8192));
  std::printf("ceilings: read %.2f TB/s, bf16 GEMM 8192^3 %.0f TFLOP/s (%s)\n", bw / 1e12, flops / 1e12, args.gpu_name.c_str());

  const llama::LlamaConfig cfg = di::bench::llama3_8b_shape();
  ModelOptions opts;
  opts.device = "cuda";
  auto made = llama::LlamaCudaModel::random(cfg, kc::DType::kBF16, 1234, opts);
  CHECK(made.status());
  llama::LlamaCudaModel& model = **made;
  const int64_t H = cfg.hidden_size, V = cfg.vocab_size;
  const int64_t weight_bytes = model.weight_bytes();
  const int64_t read_bytes = weight_bytes - V * H * 2 + /* one embedding row */ H * 2;
  const int64_t kv_token_bytes = model.cache_groups()[0].entry_bytes * cfg.num_hidden_layers;
  std::printf("model: %.2f GB of bf16 weights, decode reads %.2f GB + %.0f kB KV per context token\n",
              weight_bytes / 1e9, read_bytes / 1e9, kv_token_bytes / 1e3);

  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(V - 1));
  std::vector<ResultRow> rows;
  // `ctx` random tokens.
  auto random_prompt = [&](int ctx) {
    return [&, ctx](int) {
      std::vector<int32_t> p(static_cast<size_t>(ctx));
      for (int32_t& x : p) x = tok(rng);
      return p;
    };
  };

  // Decode at batch B after a `ctx`-token prompt each: median step over `steps` steps.
  auto decode = [&](llama::LlamaCudaModel& model, const std::string& mode, int B, int ctx, int steps) {
    std::vector<float> logits;
    di::bench::DecodeBatch d = di::bench::prefill_sequences(model, B, ctx + steps + 1, random_prompt(ctx), logits);
    std::vector<double> t, t_sampled;
    std::vector<di::Result<di::engine::SampledToken>> drawn;
    for (int s = 0; s < steps; ++s) {
      for (std::vector<int32_t>& seq : d.ids) seq.push_back(tok(rng));
      ForwardBatch step = d.last_tokens();
      const bool sampled = s >= steps - steps / 4;  // the last quarter draws with top-p
      const auto specs = di::bench::decode_specs(B, sampled, d.ids[0].size());
      const double t0 = now_ms();
      CHECK(model.forward_sample(step, specs, drawn));
      (sampled ? t_sampled : t).push_back(now_ms() - t0);
    }
    std::printf("  B=%d: step with greedy draws %.3f ms, with T=0.8 top-p 0.95 draws %.3f ms\n", B, median(t),
                median(t_sampled));
    const double ms = median(t);
    const double floor_ms = (read_bytes + double(B) * (ctx + steps / 2) * kv_token_bytes) / bw * 1e3;
    char m[160], c[160], r[32], n[200];
    std::snprintf(m, sizeof m, "%.3f ms/step = %.1f tok/s", ms, B * 1e3 / ms);
    std::snprintf(c, sizeof c, "floor %.3f ms (weights + KV at %.2f TB/s read)", floor_ms, bw / 1e12);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * floor_ms / ms);
    std::snprintf(n, sizeof n, "median of %d steps, host wall time per forward incl. metadata upload and greedy sampling on the device; decode replayed as CUDA graphs",
                  steps);
    rows.push_back({"llama-3-8B shape bf16 decode batch " + std::to_string(B) + ", ctx " + std::to_string(ctx) + mode,
                    m, c, r, n});
    std::printf("decode B=%d ctx=%d%s: %s | %s | %s\n", B, ctx, mode.c_str(), m, c, r);
    return ms;
  };
  const int kBatches[3][3] = {{1, 128, 128}, {8, 1024, 32}, {64, 1024, 16}};
  double default_ms[3];
  for (int i = 0; i < 3; ++i) default_ms[i] = decode(model, "", kBatches[i][0], kBatches[i][1], kBatches[i][2]);

  // Prefill one S-token prompt.
  {
    const int S = 8192;
    std::vector<int32_t> ids(S);
    for (int32_t& x : ids) x = tok(rng);
    const double ms = di::bench::median_prefill_ms(model, ids);
    const double body_params = double(weight_bytes / 2 - 2 * V * H);  // layers only (embedding + head apart)
    const double fl = 2.0 * body_params * S + 2.0 * double(S) * S * H * cfg.num_hidden_layers + 2.0 * V * H;
    const double floor_ms = fl / flops * 1e3;
    char m[160], cc[160], r[32];
    std::snprintf(m, sizeof m, "%.1f ms (%.0f tok/s, %.0f TFLOP/s effective)", ms, S * 1e3 / ms, fl / (ms * 1e-3) / 1e12);
    std::snprintf(cc, sizeof cc, "floor %.1f ms (%.1f TFLOP at %.0f TFLOP/s)", floor_ms, fl / 1e12, flops / 1e12);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * floor_ms / ms);
    rows.push_back({"llama-3-8B shape bf16 prefill, one 8192-token prompt", m, cc, r,
                    "median of 3; cuBLAS GEMMs + own WMMA flash attention"});
    std::printf("prefill S=%d: %s | %s | %s\n", S, m, cc, r);
  }

  if (compare_deterministic) {
    // The same shape and weights in batch-invariant mode: fixed-plan GEMMs, every row through
    // the split-KV kernel in 256-key chunks.
    auto inv = llama::LlamaCudaModel::random(cfg, kc::DType::kBF16, 1234, opts);
    CHECK(inv.status());
    if (!(*inv)->enable_batch_invariance()) {
      std::fprintf(stderr, "bench_gpu_llama: the model has no batch-invariant mode\n");
      return 1;
    }
    const std::string mode = " (deterministic)";
    for (int i = 0; i < 3; ++i) {
      const double ms = decode(**inv, mode, kBatches[i][0], kBatches[i][1], kBatches[i][2]);
      char m[160], r[32];
      std::snprintf(m, sizeof m, "%.2fx the default step (%.3f vs %.3f ms)", ms / default_ms[i], ms, default_ms[i]);
      std::snprintf(r, sizeof r, "%s", ms / default_ms[i] <= 1.3 ? "within" : "over");
      rows.push_back({"llama-3-8B shape bf16 deterministic-mode cost, decode batch " + std::to_string(kBatches[i][0]), m,
                      "goal <= 1.3x", r, "same weights and steps; median step times"});
      std::printf("deterministic cost B=%d: %s\n", kBatches[i][0], m);
    }
    const int S = 2048;
    std::vector<int32_t> ids(S);
    for (int32_t& x : ids) x = tok(rng);
    const double d_ms = di::bench::median_prefill_ms(model, ids), i_ms = di::bench::median_prefill_ms(**inv, ids);
    char m[160];
    std::snprintf(m, sizeof m, "%.2fx the default prefill (%.1f vs %.1f ms)", i_ms / d_ms, i_ms, d_ms);
    rows.push_back({"llama-3-8B shape bf16 deterministic-mode cost, one 2048-token prefill", m, "(no goal)", "-",
                    "median of 3; the mode runs prompt rows through the split-KV decode kernel"});
    std::printf("deterministic cost, prefill S=%d: %s\n", S, m);
  }

  di::bench::append_rows(args, rows);
  return 0;
}
