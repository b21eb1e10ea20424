// bench_gpu_v4: a DeepSeek-V4-Flash-width model (transformers' DeepseekV4Config defaults: hidden
// 4096, 64 heads x 512, q_lora 1024, 8 output groups of rank 1024, window 128, indexer 64 x 128
// top-512, hc_mult 4, 256 routed experts of width 2048, top-6 + 1 shared, vocab 129,280) cut to
// three layers (sliding + hash-routed MoE, CSA, HCA), random weights drawn on the GPU: bf16, then
// fp8 as DeepSeek ships them (128 x 128 scales; routed experts with the 1 x 128 scales their fp4
// re-encoding gives), each against its own byte floor.
// Decode at batch 1, 8, 32 and 128 after a 4k-token context against the bytes a step must read
// (the weights it touches once, the KV entries each sequence attends to), at the read bandwidth
// measured in the same run; an 8k-token prefill against the FLOP floor at the measured bf16 GEMM
// rate. Prints a table and, with --append FILE COMMIT DEVICE, appends rows to bench/RESULTS.md.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_bench_util.h"
#include "bench/gpu_v4_shape.h"
#include "engine/model/cuda/device_cache.h"
#include "engine/model/deepseek_v4/v4_cuda_model.h"
#include "bench/gpu_ceilings.h"
#include "kernels/cuda/device.h"

namespace kc = di::kernels::cuda;
using namespace di::engine;
using deepseek_v4::AttnType;
using deepseek_v4::MlpType;

using di::bench::flash_width_slice;
using di::bench::now_ms;
using di::bench::ResultRow;

namespace {

// Parameters (bf16 elements) a decode step reads whatever the batch, and those of one routed expert.
struct Params {
  double dense = 0, expert = 0, head = 0;
};

Params count_params(const deepseek_v4::DeepseekV4Config& c) {
  const double H = c.hidden_size, nh = c.num_attention_heads, hd = c.head_dim, qlr = c.q_lora_rank,
               I = c.moe_intermediate_size, E = c.n_routed_experts, ih = c.index_n_heads, ihd = c.index_head_dim;
  Params p;
  p.expert = 3 * H * I;
  for (size_t l = 0; l < c.layer_types.size(); ++l) {
    p.dense += qlr * H + nh * hd * qlr + hd * H + c.o_groups * c.o_lora_rank * (nh * hd / c.o_groups) +
               H * c.o_groups * c.o_lora_rank;  // attention
    p.dense += E * H + p.expert;                 // router + shared expert
    if (c.layer_types[l] == AttnType::kCSA) p.dense += 2 * 2 * hd * H + 2 * 2 * ihd * H + ih * ihd * qlr + ih * H;
    if (c.layer_types[l] == AttnType::kHCA) p.dense += 2 * hd * H;
  }
  p.head = double(c.vocab_size) * H;
  return p;
}


// One model (bf16 or fp8 weights): decode at each batch, then the 8k prefill, as rows.
void run(const di::bench::BenchArgs& args, double bw, double flops, bool fp8, std::vector<ResultRow>& rows) {
  const deepseek_v4::DeepseekV4Config cfg = flash_width_slice();
  ModelOptions opts;
  opts.device = "cuda";
  const double t_load = now_ms();
  // fp8: the projections 1 byte per parameter (plus a scale per 128 or 128 x 128); bf16: 2.
  const double wb = fp8 ? 1.0 : 2.0;
  const char* kind = fp8 ? "fp8 (routed experts as re-encoded fp4)" : "bf16";
  auto made = deepseek_v4::V4CudaModel::random(cfg, kc::DType::kBF16, 1234, opts, fp8);
  CHECK(made.status());
  deepseek_v4::V4CudaModel& model = **made;
  const Params params = count_params(cfg);
  std::printf("model: %.2f GB of %s weights (made in %.1f s); a step reads %.2f GB dense + head, %.1f MB per routed expert\n",
              model.weight_bytes() / 1e9, kind, (now_ms() - t_load) / 1e3,
              (params.dense * wb + params.head * 2) / 1e9, params.expert * wb / 1e6);

  const int64_t V = cfg.vocab_size, L = cfg.num_hidden_layers, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(V - 1));

  // KV bytes one decode token reads at context `ctx`: window rows in every layer, the indexer's
  // keys and top-k entries in CSA layers, all compressed entries in HCA layers (fp32 caches).
  auto kv_bytes = [&](double ctx) {
    double b = 0;
    for (AttnType t : cfg.layer_types) {
      b += std::min<double>(ctx, cfg.sliding_window) * cfg.head_dim * 4;
      if (t == AttnType::kCSA)
        b += ctx / cfg.compress_rate_csa * cfg.index_head_dim * 4 +
             std::min<double>(cfg.index_topk, ctx / cfg.compress_rate_csa) * cfg.head_dim * 4;
      if (t == AttnType::kHCA) b += ctx / cfg.compress_rate_hca * cfg.head_dim * 4;
    }
    return b;
  };

  if (args.profile_prefill > 0) {  // --profile-prefill S: one S-token prefill, bf16 only
    std::vector<int32_t> ids(args.profile_prefill);
    for (int32_t& x : ids) x = tok(rng);
    std::printf("prefill S=%d: %.1f ms\n", args.profile_prefill, di::bench::median_prefill_ms(model, ids, 1, true));
    return;
  }
  const int ctx = 4096;
  std::vector<int32_t> prompt(ctx);
  for (int32_t& x : prompt) x = tok(rng);
  std::vector<float> logits;
  di::bench::DecodeBatch context =
      di::bench::prefill_sequences(model, 1, ctx + 64, [&](int) { return prompt; }, logits);

  // --profile B: one decode step of batch B between profiler marks (for ncu), after warm-up steps.
  const std::vector<int> batches = args.profile_batch > 0 ? std::vector<int>{args.profile_batch}
                                                          : std::vector<int>{1, 8, 32, 128};
  for (int B : batches) {
    const int steps = B >= 32 ? 16 : 32;
    const di::bench::DecodeTimes times = di::bench::time_decode(model, *context.caches[0], prompt, ctx + 64, B, steps,
                                                               args.profile_batch > 0, [&] { return tok(rng); });
    {  // what a logits copy alone would cost (the engine samples on the device)
      float* dev = nullptr;
      CHECK(kc::cuda_status(cudaMalloc(&dev, logits.size() * 4), "cudaMalloc"));
      const double t0 = now_ms();
      CHECK(kc::cuda_status(cudaMemcpy(logits.data(), dev, logits.size() * 4, cudaMemcpyDeviceToHost), "copy"));
      std::printf("  B=%d: logits copy alone (%.1f MB to pageable memory) %.3f ms\n", B, logits.size() * 4 / 1e6,
                  now_ms() - t0);
      cudaFree(dev);
    }
    if (args.profile_batch > 0) return;
    const double ms = times.greedy_ms;
    // Routed experts a step touches: each layer's distinct experts among B * K uniform picks.
    const double touched = L * E * (1 - std::pow(1 - double(K) / E, B));
    // The embedding and head stay bf16; fp8 scales add 4 bytes per 128 (experts) or 128 x 128.
    const double bytes = (params.dense + touched * params.expert) * wb * (fp8 ? 1 + 4.0 / 128 : 1) +
                         params.head * 2 + B * kv_bytes(ctx + steps / 2.0);
    const double floor_ms = bytes / bw * 1e3;
    char m[160], c[200], r[32], n[240];
    std::snprintf(m, sizeof m, "%.3f ms/step = %.1f tok/s", ms, B * 1e3 / ms);
    std::snprintf(c, sizeof c, "floor %.3f ms (%.2f GB: weights touched + KV at %.2f TB/s read)", floor_ms, bytes / 1e9,
                  bw / 1e12);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * floor_ms / ms);
    std::snprintf(n, sizeof n,
                  "median of %d steps, host wall time per forward incl. metadata upload and greedy sampling on the device; "
                  "decode replayed as CUDA graphs; experts grouped on the device",
                  steps);
    rows.push_back({std::string("deepseek-v4-flash width (3 layers: SWA+hash, CSA, HCA; 256 experts) ") + kind +
                        " decode batch " + std::to_string(B) + ", ctx 4096",
                    m, c, r, n});
    std::printf("decode B=%d ctx=%d: %s | %s | %s\n", B, ctx, m, c, r);
  }

  {
    const int S = 8192;
    std::vector<int32_t> ids(S);
    for (int32_t& x : ids) x = tok(rng);
    const double ms = di::bench::median_prefill_ms(model, ids);
    const double active = params.dense + K * params.expert * L;  // per token, embedding apart
    double attn = 0;  // QK and PV over each token's keys, every head
    for (AttnType ty : cfg.layer_types) {
      const double keys = std::min<double>(S / 2.0, cfg.sliding_window) +
                          (ty == AttnType::kCSA ? std::min<double>(cfg.index_topk, S / 2.0 / 4)
                           : ty == AttnType::kHCA ? S / 2.0 / 128
                                                  : 0);
      attn += 4.0 * S * keys * cfg.num_attention_heads * cfg.head_dim;
    }
    const double fl = 2.0 * active * S + attn + 2.0 * V * cfg.hidden_size;
    const double floor_ms = fl / flops * 1e3;
    char m[160], cc[160], r[32];
    std::snprintf(m, sizeof m, "%.1f ms (%.0f tok/s, %.0f TFLOP/s effective)", ms, S * 1e3 / ms, fl / (ms * 1e-3) / 1e12);
    std::snprintf(cc, sizeof cc, "floor %.1f ms (%.1f TFLOP at %.0f TFLOP/s)", floor_ms, fl / 1e12, flops / 1e12);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * floor_ms / ms);
    rows.push_back({std::string("deepseek-v4-flash width (3 layers, 256 experts) ") + kind +
                        " prefill, one 8192-token prompt",
                    m, cc, r,
                    fp8 ? "median of 3; cuBLASLt block-scaled fp8 dense GEMMs (activations quantized per 1x128), "
                          "routed experts dequantized to bf16 per expert, bf16 tensor-core attention and indexer "
                          "scores; floor at the bf16 rate"
                        : "median of 3; cuBLAS dense GEMMs, routed experts as cuBLAS grouped GEMMs over runs of "
                          "experts (host-grouped), bf16 tensor-core attention and indexer scores"});
    std::printf("prefill S=%d: %s | %s | %s\n", S, m, cc, r);
  }

}

}  // namespace

int main(int argc, char** argv) {
  const di::bench::BenchArgs args = di::bench::parse_bench_args(argc, argv);
  const double bw = di::bench::must(di::bench::measure_read_bandwidth(int64_t{4} << 30));
  const double flops = di::bench::must(di::bench::measure_gemm_rate(8192));
  std::printf("ceilings: read %.2f TB/s, bf16 GEMM 8192^3 %.0f TFLOP/s (%s)\n", bw / 1e12, flops / 1e12,
              args.gpu_name.c_str());

  std::vector<ResultRow> rows;
  for (bool fp8 : {false, true})
    if (!fp8 || args.profile_prefill == 0) run(args, bw, flops, fp8, rows);
  di::bench::append_rows(args, rows);
  return 0;
}
