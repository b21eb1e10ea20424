// What the GPU benchmarks (bench/gpu_*_bench.cpp) share: their command line, timing, the
// Llama-3-8B layer shape they run with random weights, and the row format of bench/RESULTS.md.
// It measures nothing itself; each benchmark keeps its own workload and ceilings.
#pragma once

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/cuda/device_cache.h"
#include "engine/model/llama/llama_config.h"
#include "engine/model/model.h"
#include "kernels/cuda/device.h"

namespace di::bench {

// A failed Status ends the benchmark: a number measured past an error would mislead.
#define CHECK(x)                                                                      \
  do {                                                                                \
    auto st_ = (x);                                                                   \
    if (!st_.is_ok()) {                                                               \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, st_.message().c_str()); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

// The value of a step the benchmark cannot go on without; its error ends the run.
template <typename T>
T must(Result<T> r) {
  CHECK(r.status());
  return std::move(r).value();
}

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The draws of a decode step of B sequences as the engine asks for them: greedy, or a typical
// chat setting (temperature 0.8, top-p 0.95).
inline std::vector<engine::SampleSpec> decode_specs(int B, bool sampled, uint64_t position) {
  std::vector<engine::SampleSpec> specs(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    specs[b].row = b;
    specs[b].seed = 1000 + b;
    specs[b].position = position;
    if (sampled) {
      specs[b].temperature = 0.8;
      specs[b].top_p = 0.95;
    } else {
      specs[b].temperature = 0;
    }
  }
  return specs;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// --append FILE COMMIT DEVICE (rows for bench/RESULTS.md), --profile B (one decode step of batch
// B between profiler marks) and --profile-prefill S (one S-token prefill between them).
struct BenchArgs {
  std::string append_file, commit = "unknown", device = "unknown";
  int profile_batch = 0;
  int profile_prefill = 0;
  std::string gpu_name;  // what the driver calls GPU 0; the device column when none is given
};

inline BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--profile" && i + 1 < argc) {
      a.profile_batch = std::atoi(argv[++i]);
    } else if (std::string(argv[i]) == "--profile-prefill" && i + 1 < argc) {
      a.profile_prefill = std::atoi(argv[++i]);
    } else if (std::string(argv[i]) == "--append" && i + 3 < argc) {
      a.append_file = argv[i + 1];
      a.commit = argv[i + 2];
      a.device = argv[i + 3];
      i += 3;
    }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  a.gpu_name = prop.name;
  if (a.device == "unknown") a.device = a.gpu_name;
  return a;
}

// Llama-3-8B's layers; `vocab` rows of embedding and head (128,256 in Llama 3).
inline engine::llama::LlamaConfig llama3_8b_shape(int64_t vocab = 128256) {
  return {.model_type = "llama",
          .vocab_size = vocab,
          .hidden_size = 4096,
          .intermediate_size = 14336,
          .num_hidden_layers = 32,
          .num_attention_heads = 32,
          .num_key_value_heads = 8,
          .head_dim = 128,
          .rms_norm_eps = 1e-5,
          .max_position_embeddings = 131072,
          .rope = {.rope_type = "llama3",
                   .rope_theta = 500000.0,
                   .dim = 128,
                   .factor = 8.0,
                   .low_freq_factor = 1.0,
                   .high_freq_factor = 4.0,
                   .original_max_position_embeddings = 8192},
          .eos_token_ids = {}};
}

// A batch of sequences decoding side by side, each in its own device cache.
struct DecodeBatch {
  std::vector<std::unique_ptr<engine::SequenceCache>> caches;
  std::vector<std::vector<int32_t>> ids;  // every sequence's tokens so far

  // One decode step: each sequence's last token, at its position.
  engine::ForwardBatch last_tokens() {
    engine::ForwardBatch step;
    for (size_t b = 0; b < ids.size(); ++b)
      step.seqs.push_back({&ids[b].back(), 1, static_cast<int64_t>(ids[b].size() - 1), caches[b].get(), false});
    return step;
  }
};

// `count` sequences, sequence b prefilled (one forward each) with `prompt(b)`, called in order,
// into a device cache with room for `capacity` tokens.
inline DecodeBatch prefill_sequences(engine::Model& model, int count, int64_t capacity,
                                     const std::function<std::vector<int32_t>(int)>& prompt,
                                     std::vector<float>& logits) {
  DecodeBatch d;
  for (int b = 0; b < count; ++b) {
    auto c = engine::cuda::DeviceSequenceCache::create(model.cache_groups(), capacity);
    CHECK(c.status());
    d.caches.push_back(std::move(c).value());
    d.ids.push_back(prompt(b));
    engine::ForwardBatch pre;
    pre.seqs.push_back({d.ids[b].data(), static_cast<int32_t>(d.ids[b].size()), 0, d.caches[b].get(), false});
    CHECK(model.forward(pre, logits));
  }
  return d;
}

// Copies every group of `from` into `to` (same specs): sequences that share a prefilled context.
inline void copy_cache(const std::vector<engine::CacheGroupSpec>& specs, engine::SequenceCache& from,
                       engine::SequenceCache& to) {
  for (size_t g = 0; g < specs.size(); ++g) {
    kernels::CacheView a, b;
    if (!from.paged_view(static_cast<int32_t>(g), &a) || !to.paged_view(static_cast<int32_t>(g), &b)) std::exit(1);
    CHECK(kernels::cuda::cuda_status(
        cudaMemcpy(b.base, a.base, static_cast<size_t>(a.layer_stride * specs[g].num_layers), cudaMemcpyDeviceToDevice),
        "cache copy"));
  }
}

// Median host wall time (ms) of one decode step with greedy draws and with sampled ones.
struct DecodeTimes {
  double greedy_ms = 0, sampled_ms = 0;
};

// B sequences continue `context` (prefilled with `prompt`, `capacity` tokens of room) for `steps`
// timed steps of forward_sample, each appending a token from `next_token`; the first two steps
// capture the CUDA graphs and are not timed, the last quarter draws with top-p. `profile`: the
// last step runs between profiler marks (for ncu).
inline DecodeTimes time_decode(engine::Model& model, engine::SequenceCache& context,
                               const std::vector<int32_t>& prompt, int64_t capacity, int B, int steps,
                               bool profile, const std::function<int32_t()>& next_token) {
  DecodeBatch d;
  for (int b = 0; b < B; ++b) {
    auto c = engine::cuda::DeviceSequenceCache::create(model.cache_groups(), capacity);  // the layout of `context`
    CHECK(c.status());
    copy_cache(model.cache_groups(), context, **c);
    d.caches.push_back(std::move(c).value());
    d.ids.push_back(prompt);
  }
  std::vector<double> t, t_sampled;
  std::vector<Result<engine::SampledToken>> drawn;
  for (int s = 0; s < steps + 2; ++s) {
    for (std::vector<int32_t>& seq : d.ids) seq.push_back(next_token());
    engine::ForwardBatch step = d.last_tokens();
    const bool marked = profile && s == steps + 1;
    if (marked) cudaProfilerStart();
    const bool sampled = s >= steps + 2 - steps / 4;
    const auto specs = decode_specs(B, sampled, d.ids[0].size());
    const double t0 = now_ms();
    CHECK(model.forward_sample(step, specs, drawn));
    if (marked) cudaProfilerStop();
    if (s >= 2) (sampled ? t_sampled : t).push_back(now_ms() - t0);
  }
  std::printf("  B=%d: step with greedy draws %.3f ms, with T=0.8 top-p 0.95 draws %.3f ms\n", B, median(t),
              median(t_sampled));
  return {median(t), median(t_sampled)};
}

// Median host wall time (ms) of `repeats` prefills of `ids` (one sequence, from position 0) into a
// fresh device cache.
// `profile`: after the timed repeats, one more prefill between profiler marks (for ncu).
inline double median_prefill_ms(engine::Model& model, const std::vector<int32_t>& ids, int repeats = 3,
                                bool profile = false) {
  const int32_t S = static_cast<int32_t>(ids.size());
  auto c = engine::cuda::DeviceSequenceCache::create(model.cache_groups(), S);
  CHECK(c.status());
  std::vector<float> logits;
  std::vector<double> t;
  for (int i = 0; i < repeats + (profile ? 1 : 0); ++i) {
    engine::ForwardBatch pre;
    pre.seqs.push_back({ids.data(), S, 0, c->get(), false});
    const bool marked = i == repeats;
    if (marked) cudaProfilerStart();
    const double t0 = now_ms();
    CHECK(model.forward(pre, logits));
    if (marked) cudaProfilerStop();
    if (!marked) t.push_back(now_ms() - t0);
  }
  return median(t);
}

// One row of bench/RESULTS.md: what ran, what it measured, the ceiling it is held against.
struct ResultRow {
  std::string what, measured, ceiling, ratio, notes;
};

// Appends `rows` to the --append file (nothing without one), dated today (UTC).
inline void append_rows(const BenchArgs& args, const std::vector<ResultRow>& rows) {
  if (args.append_file.empty()) return;
  std::ofstream out(args.append_file, std::ios::app);
  char date[32];
  const std::time_t tt = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&tt));
  for (const ResultRow& r : rows)
    out << "| " << date << " | " << args.commit << " | " << args.device << " | " << r.what << " | " << r.measured
        << " | " << r.ceiling << " | " << r.ratio << " | " << r.notes << " |\n";
}

}  // namespace di::bench
