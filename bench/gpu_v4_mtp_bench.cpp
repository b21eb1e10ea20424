// bench_gpu_v4_mtp: MTP speculative decoding of DeepSeek-V4 on the GPU.
// (a) Through the engine (LLM::generate, device "cuda") on the trained demo model
//     (models/deepseek-v4-demo, its MTP head trained, so acceptance is real): greedy decode
//     tokens/s at batch 1 (and a batch of the four demo prompts) with drafts off, fixed k = 1, 2,
//     3 and the variable length (max 5); the ceiling of a speculative row is drafts off in the
//     same run. Verify and plain decode steps and the MTP passes replay CUDA graphs; a greedy
//     step draws, verifies and picks its first draft token on the device with one wait
//     (Model::verify_greedy), each further draft token costs a wait of its own.
// (b) The verify cost per extra token the variable-length scheduler weighs, on the
//     V4-Flash-width random model of bench_gpu_v4 (bf16): one forward of n = 1..6 tokens per
//     sequence (a logits row per token, copied to the host as the drafting runner reads them)
//     after a 4k-token context, at B = 1 and 8.
//
//   bench_gpu_v4_mtp [--append RESULTS.md COMMIT DEVICE] [--profile N]
//   --profile N: only batch 1's timed run with N - 1 drafts (1: drafts off), 16 new tokens,
//   between profiler marks (for ncu: the kernels a speculative step adds).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/gpu_bench_util.h"
#include "bench/gpu_v4_shape.h"
#include "engine/llm.h"
#include "engine/model/cuda/device_cache.h"
#include "engine/model/deepseek_v4/v4_cuda_model.h"
#include "kernels/cuda/device.h"

namespace kc = di::kernels::cuda;
using namespace di::engine;
using di::bench::median;
using di::bench::now_ms;
using di::bench::ResultRow;

namespace {

const std::string kDemoDir = std::string(DI_SOURCE_DIR) + "/models/deepseek-v4-demo";

std::vector<int32_t> fixture_prompt(const std::string& name) {
  std::ifstream in(std::string(DI_SOURCE_DIR) + "/tests/fixtures/model_v4_demo/" + name + "/fixture.json");
  return nlohmann::json::parse(in).at("prompt_ids").get<std::vector<int32_t>>();
}

struct EngineRow {
  std::string name;
  double tok_s = 0, tokens_per_step = 0, acceptance = 0;
  int64_t drafts = 0;
  double step_ms = 0;   // wall time per engine step
  std::string phases;   // ms per step of each step phase (engine metrics)
};

// Greedy decode of `prompts` with drafts as given; the prefill runs first, untimed.
EngineRow run_engine(const std::string& name, int32_t k, int32_t variable, int64_t new_tokens,
                     const std::vector<std::vector<int32_t>>& prompts, bool profile = false) {
  EngineConfig c;
  c.max_model_len = 1024;
  c.max_num_seqs = static_cast<int32_t>(prompts.size());
  c.num_speculative_tokens = k;
  c.speculative_variable = variable;
  ModelOptions o;
  o.device = "cuda";
  auto llm = LLM::load(kDemoDir, c, o);
  CHECK(llm.status());
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = new_tokens;
  p.ignore_eos = true;
  SamplingParams one = p;
  one.max_tokens = 1;
  CHECK((*llm)->generate(prompts, one).status());
  CHECK((*llm)->generate(prompts, p).status());  // warm-up: graphs captured, workspaces sized
  const nlohmann::json before = nlohmann::json::parse((*llm)->engine().metrics_json());
  if (profile) cudaProfilerStart();
  const double t0 = now_ms();
  auto out = (*llm)->generate(prompts, p);
  const double s = (now_ms() - t0) / 1e3;
  if (profile) cudaProfilerStop();
  CHECK(out.status());
  const nlohmann::json m = nlohmann::json::parse((*llm)->engine().metrics_json());
  auto delta = [&](const char* key) { return m.value(key, int64_t{0}) - before.value(key, int64_t{0}); };
  EngineRow r;
  r.name = name;
  const int64_t gen = delta("generation_tokens"), steps = delta("steps");
  r.tok_s = static_cast<double>(gen) / s;
  r.tokens_per_step = steps > 0 ? double(gen) / double(steps) / double(prompts.size()) : 0;
  r.drafts = delta("spec_draft_tokens");
  r.acceptance = r.drafts > 0 ? double(delta("spec_accepted_tokens")) / double(r.drafts) : 0;
  // Where a step's time goes: a speculative step's extra cost shows as forward (the device work
  // and its one wait) or as host phases around it.
  r.step_ms = steps > 0 ? s * 1e3 / double(steps) : 0;
  for (const char* phase : {"schedule", "prepare", "forward", "sample", "output"}) {
    const double sec =
        m["step_phases"][phase].value("seconds", 0.0) - before["step_phases"][phase].value("seconds", 0.0);
    const double ms = steps > 0 ? sec * 1e3 / double(steps) : 0.0;
    char b[48];
    std::snprintf(b, sizeof b, "%s%s %.3f", r.phases.empty() ? "" : ", ", phase, ms);
    r.phases += b;
  }
  return r;
}

void engine_part(std::vector<ResultRow>& rows) {
  const int64_t new_tokens = 256;
  const std::vector<std::string> names = {"demo_bible", "demo_chat", "demo_wordnet", "demo_long"};
  for (int batch : {1, 4}) {
    std::vector<std::vector<int32_t>> prompts;
    for (int i = 0; i < batch; ++i) prompts.push_back(fixture_prompt(names[i]));
    std::vector<EngineRow> r;
    r.push_back(run_engine("off", 0, 0, new_tokens, prompts));
    for (int32_t k : {1, 2, 3}) r.push_back(run_engine("fixed k=" + std::to_string(k), k, 0, new_tokens, prompts));
    r.push_back(run_engine("variable (max 5)", 5, 1, new_tokens, prompts));
    std::printf("deepseek-v4-demo on cuda (bf16), batch %d, %lld new tokens each, greedy:\n", batch,
                static_cast<long long>(new_tokens));
    for (const EngineRow& e : r) {
      std::printf("  %-18s %8.1f tok/s  %5.2f tokens/step/seq  acceptance %.3f (%lld drafts)  %.2fx\n", e.name.c_str(),
                  e.tok_s, e.tokens_per_step, e.acceptance, static_cast<long long>(e.drafts), e.tok_s / r[0].tok_s);
      std::printf("      step %.3f ms: %s ms\n", e.step_ms, e.phases.c_str());
      if (&e == &r[0]) continue;
      char m[200], c[160], q[32];
      std::snprintf(m, sizeof m, "%.1f tok/s, %.2f tokens/step/seq, acceptance %.3f", e.tok_s, e.tokens_per_step,
                    e.acceptance);
      std::snprintf(c, sizeof c, "drafts off %.1f tok/s", r[0].tok_s);
      std::snprintf(q, sizeof q, "%.0f%%", 100 * e.tok_s / r[0].tok_s);
      rows.push_back({"MTP speculative decoding on cuda, " + e.name + ": deepseek-v4-demo greedy, batch " +
                          std::to_string(batch) + ", " + std::to_string(new_tokens) + " new tokens",
                      m, c, q, "LLM::generate wall time after a warm-up run; verify, decode and MTP passes in CUDA graphs, one wait a step "
                               "plus one per draft token past the first; "
                               "`bench_gpu_v4_mtp`"});
    }
  }
}

void verify_part(std::vector<ResultRow>& rows) {
  const deepseek_v4::DeepseekV4Config cfg = di::bench::flash_width_slice();
  ModelOptions opts;
  opts.device = "cuda";
  auto made = deepseek_v4::V4CudaModel::random(cfg, kc::DType::kBF16, 1234, opts, false);
  CHECK(made.status());
  deepseek_v4::V4CudaModel& model = **made;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(cfg.vocab_size - 1));
  const int ctx = 4096, max_n = 6;
  std::vector<int32_t> ids(ctx + max_n);
  for (int32_t& x : ids) x = tok(rng);
  auto first = cuda::DeviceSequenceCache::create(model.cache_groups(), ctx + 64);
  CHECK(first.status());
  std::vector<float> logits;
  {
    ForwardBatch pre;
    pre.seqs.push_back({ids.data(), ctx, 0, first->get(), false});
    CHECK(model.forward(pre, logits));
  }
  for (int B : {1, 8}) {
    std::vector<std::unique_ptr<SequenceCache>> caches;
    for (int b = 0; b < B; ++b) {
      auto c = cuda::DeviceSequenceCache::create(model.cache_groups(), ctx + 64);
      CHECK(c.status());
      di::bench::copy_cache(model.cache_groups(), **first, **c);
      caches.push_back(std::move(c).value());
    }
    std::vector<double> ms(max_n + 1, 0);
    for (int n = 1; n <= max_n; ++n) {
      // Every repetition feeds the same positions [ctx, ctx + n): what a verify step after
      // rejected drafts does to its caches.
      ForwardBatch step;
      for (int b = 0; b < B; ++b) step.seqs.push_back({ids.data() + ctx, n, ctx, caches[b].get(), n > 1});
      std::vector<double> t;
      for (int rep = 0; rep < 12; ++rep) {
        const double t0 = now_ms();
        CHECK(model.forward(step, logits));
        if (rep >= 2) t.push_back(now_ms() - t0);
      }
      ms[n] = median(t);
    }
    std::printf("verify cost, V4-Flash width bf16, B=%d, ctx %d:", B, ctx);
    for (int n = 1; n <= max_n; ++n) std::printf("  n=%d %.3f ms", n, ms[n]);
    std::printf("\n  per extra token:");
    for (int n = 2; n <= max_n; ++n) std::printf("  %.3f ms", (ms[n] - ms[1]) / (n - 1));
    std::printf("  (CUDA graphs; n>1 with a logits row per token)\n");
    char m[400], c[200];
    int at = std::snprintf(m, sizeof m, "forward ms by tokens/seq:");
    for (int n = 1; n <= max_n && at < static_cast<int>(sizeof m); ++n)
      at += std::snprintf(m + at, sizeof m - at, " %d: %.3f", n, ms[n]);
    std::snprintf(c, sizeof c, "per extra token %.3f ms (n=2) .. %.3f ms (n=%d)", ms[2] - ms[1],
                  (ms[max_n] - ms[1]) / (max_n - 1), max_n);
    rows.push_back({"deepseek-v4-flash width (3 layers, 256 experts) bf16 verify forward, batch " + std::to_string(B) +
                        ", ctx 4096, 1..6 tokens per sequence",
                    m, c, "-", "median of 10; logits rows to the host as the drafting runner reads them; `bench_gpu_v4_mtp`"});
  }
}

}  // namespace

int main(int argc, char** argv) {
  const di::bench::BenchArgs args = di::bench::parse_bench_args(argc, argv);
  std::vector<ResultRow> rows;
  if (args.profile_batch > 0) {
    const EngineRow r = run_engine("profiled", args.profile_batch - 1, 0, 16, {fixture_prompt("demo_bible")}, true);
    std::printf("profiled k=%d: %.3f ms a step, %.2f tokens/step\n", args.profile_batch - 1, r.step_ms,
                r.tokens_per_step);
    return 0;
  }
  engine_part(rows);
  verify_part(rows);
  di::bench::append_rows(args, rows);
  return 0;
}
