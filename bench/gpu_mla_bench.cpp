// bench_gpu_mla: MLA models with random weights drawn on the GPU (no checkpoint), decode after a
// 4k-token context against the bytes a step must read (the weights it touches once, each
// sequence's latent cache) at the read bandwidth measured in the same run:
// - a DeepSeek-V2-Lite shape (hidden 2048, 27 layers, 16 heads, kv_lora 512, qk_nope 128, qk_rope
//   64, v_head 128, no q_lora, 64 routed experts of width 1408, top-6 + 2 shared, the first layer
//   dense of width 10944, vocab 102,400; its YaRN rope) in bf16, with a 4k prefill against its
//   FLOP floor. The targets: 600 tok/s at B=1, 3,600 tok/s at B=32.
// - a DeepSeek-V3-width slice (hidden 7168, 128 heads, q_lora 1536, 256 experts of width 2048,
//   top-8 in 4 of 8 groups + 1 shared, vocab 129,280; 4 layers, the first dense) in V3's fp8
//   layout (e4m3, one fp32 scale a 128 x 128 block): FP8 decode against its byte floor (target 60%
//   at B=1).
// Prints a table and, with --append FILE COMMIT DEVICE, appends rows to bench/RESULTS.md.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_bench_util.h"
#include "bench/gpu_ceilings.h"
#include "engine/model/cuda/device_cache.h"
#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_cuda_model.h"
#include "kernels/cuda/device.h"

namespace kc = di::kernels::cuda;
using namespace di::engine;

using di::bench::now_ms;
using di::bench::ResultRow;

namespace {

// DeepSeek-V2-Lite's config.json, the fields that shape the compute.
nlohmann::json v2_lite_config() {
  return {{"model_type", "deepseek_v2"},
          {"vocab_size", 102400},
          {"hidden_size", 2048},
          {"intermediate_size", 10944},
          {"moe_intermediate_size", 1408},
          {"num_hidden_layers", 27},
          {"num_attention_heads", 16},
          {"q_lora_rank", nullptr},
          {"kv_lora_rank", 512},
          {"qk_nope_head_dim", 128},
          {"qk_rope_head_dim", 64},
          {"v_head_dim", 128},
          {"n_routed_experts", 64},
          {"n_shared_experts", 2},
          {"num_experts_per_tok", 6},
          {"first_k_dense_replace", 1},
          {"topk_method", "greedy"},
          {"n_group", 1},
          {"topk_group", 1},
          {"norm_topk_prob", false},
          {"routed_scaling_factor", 1.0},
          {"max_position_embeddings", 163840},
          {"rope_theta", 10000},
          {"rope_scaling",
           {{"type", "yarn"},
            {"factor", 40},
            {"original_max_position_embeddings", 4096},
            {"beta_fast", 32},
            {"beta_slow", 1},
            {"mscale", 0.707},
            {"mscale_all_dim", 0.707}}},
          {"rms_norm_eps", 1e-6},
          {"bos_token_id", 100000},
          {"eos_token_id", 100001}};
}

// DeepSeek-V3's config.json fields that shape the compute, cut to 4 layers (the first dense).
nlohmann::json v3_slice_config() {
  nlohmann::json c = v2_lite_config();  // the rope's YaRN and the MLA head dims are the same
  c.update({{"model_type", "deepseek_v3"},
            {"vocab_size", 129280},
            {"hidden_size", 7168},
            {"intermediate_size", 18432},
            {"moe_intermediate_size", 2048},
            {"num_hidden_layers", 4},
            {"num_attention_heads", 128},
            {"q_lora_rank", 1536},
            {"n_routed_experts", 256},
            {"n_shared_experts", 1},
            {"num_experts_per_tok", 8},
            {"topk_method", "noaux_tc"},
            {"scoring_func", "sigmoid"},
            {"n_group", 8},
            {"topk_group", 4},
            {"norm_topk_prob", true},
            {"routed_scaling_factor", 2.5},
            {"bos_token_id", 0},
            {"eos_token_id", 1}});
  c["rope_scaling"]["mscale"] = 1.0;
  c["rope_scaling"]["mscale_all_dim"] = 1.0;
  return c;
}

// Parameters a decode step reads whatever the batch, and those of one routed expert. `quant`: the
// projections and experts (fp8 in a V3 checkpoint); `dense` the rest: the kv_b halves (dequantized
// at load) and the router; `head` the lm_head (bf16 always).
struct Params {
  double quant = 0, dense = 0, expert = 0, head = 0;
  int moe_layers = 0;
};

Params count_params(const deepseek_v2::MlaConfig& c) {
  const double H = c.hidden_size, nh = c.num_attention_heads, qk = c.qk_head_dim(), nope = c.qk_nope_head_dim,
               v = c.v_head_dim, kvl = c.kv_lora_rank, rd = c.qk_rope_head_dim, E = c.n_routed_experts,
               I = c.moe_intermediate_size, qlr = c.q_lora_rank;
  Params p;
  p.expert = 3 * H * I;
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    // q_proj (or q_a and q_b), kv_a, o_proj; the absorbed key half (w_uk_t) and the value half of kv_b.
    p.quant += (qlr > 0 ? qlr * H + nh * qk * qlr : nh * qk * H) + (kvl + rd) * H + H * nh * v;
    p.dense += nh * kvl * nope + nh * v * kvl;
    if (c.is_moe_layer(l)) {
      p.dense += E * H;                              // router
      p.quant += 3 * H * I * c.n_shared_experts;  // shared experts
      ++p.moe_layers;
    } else {
      p.quant += 3 * H * double(c.intermediate_size);
    }
  }
  p.head = double(c.vocab_size) * H;
  return p;
}

struct Shape {
  nlohmann::json config;
  const char* label;  // how the rows name the model
  bool fp8;
  bool prefill;
  double target_b1, target_b32;  // tok/s the issue asks for (0: a share of the floor instead)
};

void run(const Shape& shape, const di::bench::BenchArgs& args, double bw, std::vector<ResultRow>& rows) {
  auto parsed = deepseek_v2::parse_mla_config(shape.config);
  CHECK(parsed.status());
  const deepseek_v2::MlaConfig cfg = *parsed;
  ModelOptions opts;
  opts.device = "cuda";
  const double t_load = now_ms();
  auto made = deepseek_v2::MlaCudaModel::random(cfg, kc::DType::kBF16, 1234, opts, shape.fp8);
  CHECK(made.status());
  deepseek_v2::MlaCudaModel& model = **made;
  const Params params = count_params(cfg);
  // fp8: a byte per parameter and an fp32 scale per 128 x 128 block; bf16: 2 bytes.
  const double qb = shape.fp8 ? 1 + 4.0 / (128 * 128) : 2;
  const char* kind = shape.fp8 ? "fp8 (128x128 block scales)" : "bf16";
  std::printf("%s %s: %.2f GB of weights (made in %.1f s); a step reads %.2f GB dense + head, %.1f MB per routed "
              "expert\n",
              shape.label, kind, model.weight_bytes() / 1e9, (now_ms() - t_load) / 1e3,
              (params.quant * qb + (params.dense + params.head) * 2) / 1e9, params.expert * qb / 1e6);

  const int64_t V = cfg.vocab_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
  // The latent cache's entry as the model keeps it (bf16 for a bf16 model).
  const double entry_bytes = static_cast<double>(model.cache_groups()[0].entry_bytes);
  const char* cache_type = entry_bytes < (double(cfg.kv_lora_rank) + cfg.qk_rope_head_dim) * 4 ? "bf16" : "fp32";
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(V - 1));

  const int ctx = 4096;
  std::vector<int32_t> prompt(ctx);
  for (int32_t& x : prompt) x = tok(rng);
  std::vector<float> logits;
  const double t_prefill = now_ms();
  di::bench::DecodeBatch context =
      di::bench::prefill_sequences(model, 1, ctx + 64, [&](int) { return prompt; }, logits);
  std::printf("context: one %d-token prefill %.1f ms (first forward: includes cuBLAS warm-up)\n", ctx,
              now_ms() - t_prefill);

  // --profile B: one decode step of batch B between profiler marks (for ncu), after warm-up steps, for each
  // shape in turn (V2-Lite's step first, then V3's).
  const std::vector<int> batches = args.profile_batch > 0 ? std::vector<int>{args.profile_batch}
                                                          : std::vector<int>{1, 32};
  for (int B : batches) {
    const int steps = B >= 32 ? 16 : 32;
    const di::bench::DecodeTimes times = di::bench::time_decode(model, *context.caches[0], prompt, ctx + 64, B, steps,
                                                               args.profile_batch > 0, [&] { return tok(rng); });
    if (args.profile_batch > 0) return;
    const double ms = times.greedy_ms;
    // Routed experts a step touches: each MoE layer's distinct experts among B * K uniform picks.
    const double touched = params.moe_layers * E * (1 - std::pow(1 - double(K) / E, B));
    const double kv = double(B) * (ctx + steps / 2.0) * cfg.num_hidden_layers * entry_bytes;
    const double bytes = (params.quant + touched * params.expert) * qb + (params.dense + params.head) * 2 + kv;
    const double floor_ms = bytes / bw * 1e3;
    const double target = B == 1 ? shape.target_b1 : B == 32 ? shape.target_b32 : 0;
    char m[160], c[220], r[32], n[320];
    std::snprintf(m, sizeof m, "%.3f ms/step = %.1f tok/s", ms, B * 1e3 / ms);
    std::snprintf(c, sizeof c, "floor %.3f ms (%.2f GB: weights touched + %.2f GB %s latent cache at %.2f TB/s read)",
                  floor_ms, bytes / 1e9, kv / 1e9, cache_type, bw / 1e12);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * floor_ms / ms);
    char goal[64] = "";
    if (target > 0) std::snprintf(goal, sizeof goal, "; target %.0f tok/s", target);
    std::snprintf(n, sizeof n,
                  "median of %d steps, host wall time per forward incl. metadata upload and greedy sampling on the "
                  "device; decode replayed as CUDA graphs; experts grouped on the device%s",
                  steps, goal);
    rows.push_back({std::string(shape.label) + " " + kind + " decode batch " + std::to_string(B) + ", ctx 4096", m, c,
                    r, n});
    std::printf("decode B=%d ctx=%d: %s | %s | %s", B, ctx, m, c, r);
    if (target > 0) std::printf(" | target %.0f tok/s: %s", target, B * 1e3 / ms >= target ? "met" : "NOT met");
    std::printf("\n");
  }

  if (shape.prefill) {  // the context's prompt again, timed (experts grouped on the host: a prefill has too many pairs)
    const double flops = di::bench::must(di::bench::measure_gemm_rate(8192));
    const double ms = di::bench::median_prefill_ms(model, prompt);
    const double active = params.quant + params.dense + K * params.expert * params.moe_layers;  // per token
    const double attn = 2.0 * ctx * (ctx / 2.0) * cfg.num_attention_heads * (cfg.qk_head_dim() + cfg.v_head_dim);
    const double fl = 2.0 * active * ctx + attn + 2.0 * V * cfg.hidden_size;
    const double floor_ms = fl / flops * 1e3;
    char m[160], c[160], r[32];
    std::snprintf(m, sizeof m, "%.1f ms (%.0f tok/s, %.0f TFLOP/s effective)", ms, ctx * 1e3 / ms,
                  fl / (ms * 1e-3) / 1e12);
    std::snprintf(c, sizeof c, "floor %.1f ms (%.1f TFLOP at %.0f TFLOP/s)", floor_ms, fl / 1e12, flops / 1e12);
    std::snprintf(r, sizeof r, "%.0f%%", 100 * floor_ms / ms);
    rows.push_back({std::string(shape.label) + " " + kind + " prefill, one 4096-token prompt", m, c, r,
                    "median of 3; cuBLAS dense GEMMs, routed experts as cuBLAS grouped GEMMs over runs of experts "
                    "(host-grouped), tensor-core MLA attention"});
    std::printf("prefill S=%d: %s | %s | %s\n", ctx, m, c, r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const di::bench::BenchArgs args = di::bench::parse_bench_args(argc, argv);
  const double bw = di::bench::must(di::bench::measure_read_bandwidth(int64_t{4} << 30));
  std::printf("ceiling: read %.2f TB/s (%s)\n", bw / 1e12, args.gpu_name.c_str());
  std::vector<ResultRow> rows;
  run({v2_lite_config(), "deepseek-v2-lite shape (27 layers, 64 experts top-6 + 2 shared)", false, true, 600, 3600},
      args, bw, rows);
  run({v3_slice_config(), "deepseek-v3 width (4 layers, the first dense; 256 experts top-8 + 1 shared)", true, false,
       0, 0},
      args, bw, rows);
  di::bench::append_rows(args, rows);
  return 0;
}
