// DeepSeek-V4 CPU speed on a mid-size random config: prefill and decode tokens/s at a given
// thread count, beside two ceilings measured in the same run (the CPU linear kernel's GFLOP/s
// on a square product, and read bandwidth for decode's weight streaming).
// Usage: bench_v4_cpu [threads=2] [prefill_tokens=512] [decode_tokens=32]
//                     [--append RESULTS.md COMMIT DEVICE]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_command_line.h"
#include "engine/model/model.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/threads.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Writer {  // streams a safetensors file: header first, then the tensors in order
  std::vector<std::pair<std::string, std::vector<int64_t>>> specs;
  void add(const std::string& name, std::vector<int64_t> shape) { specs.push_back({name, std::move(shape)}); }
  int64_t write(const std::string& path, std::mt19937& rng) {
    json header = json::object();
    uint64_t off = 0;
    for (auto& [name, shape] : specs) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      header[name] = {{"dtype", name.find("tid2eid") != std::string::npos ? "I64" : "F32"},
                      {"shape", shape}, {"data_offsets", {off, off + n * (name.find("tid2eid") != std::string::npos ? 8 : 4)}}};
      off += n * (name.find("tid2eid") != std::string::npos ? 8 : 4);
    }
    std::string h = header.dump();
    while (h.size() % 8) h += ' ';
    std::ofstream out(path, std::ios::binary);
    const uint64_t hn = h.size();
    out.write(reinterpret_cast<const char*>(&hn), 8);
    out << h;
    std::normal_distribution<float> normal(0.f, 1.f);
    int64_t params = 0;
    for (auto& [name, shape] : specs) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      params += n;
      if (name.find("tid2eid") != std::string::npos) {
        std::vector<int64_t> v(n);
        for (int64_t i = 0; i < n; ++i) v[i] = (i * 7 + i / shape[1] * 3) % 8;  // distinct per row
        out.write(reinterpret_cast<const char*>(v.data()), n * 8);
        continue;
      }
      const bool norm = name.find("norm") != std::string::npos;
      const float std_dev = shape.size() == 2 ? 1.0f / std::sqrt(static_cast<float>(shape[1])) : 0.3f;
      std::vector<float> v(n);
      for (auto& x : v) x = norm ? 1.0f + 0.1f * normal(rng) : std_dev * normal(rng);
      out.write(reinterpret_cast<const char*>(v.data()), n * 4);
    }
    return params;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const auto cl = di::bench::parse_bench_command_line<3>(argc, argv, {2, 512, 32});
  const auto [threads, prefill, decode] = cl.numbers;

  // Mid-size: every layer type, hash and top-k MoE, hc_mult 4, real compression rates.
  const int64_t H = 1024, V = 8192, NH = 16, HD = 128, QL = 384, OG = 4, OL = 256, E = 8, K = 2, I = 256;
  const int64_t IH = 16, IHD = 64, HC = 4, MIX = (2 + HC) * HC;
  const std::vector<std::string> types = {"compressed_sparse_attention", "heavily_compressed_attention",
                                          "sliding_attention", "compressed_sparse_attention"};
  json config = {{"model_type", "deepseek_v4"}, {"vocab_size", V}, {"hidden_size", H},
                 {"num_hidden_layers", 4}, {"num_attention_heads", NH}, {"head_dim", HD},
                 {"partial_rotary_factor", 0.25}, {"q_lora_rank", QL}, {"o_groups", OG},
                 {"o_lora_rank", OL}, {"moe_intermediate_size", I}, {"n_routed_experts", E},
                 {"num_experts_per_tok", K}, {"layer_types", types},
                 {"mlp_layer_types", {"hash_moe", "moe", "moe", "moe"}},
                 {"compress_rates", {{"compressed_sparse_attention", 4}, {"heavily_compressed_attention", 128}}},
                 {"sliding_window", 128}, {"hc_mult", HC}, {"index_n_heads", IH}, {"index_head_dim", IHD},
                 {"index_topk", 64}, {"num_nextn_predict_layers", 0}, {"eos_token_id", nullptr}};
  const std::string dir = (std::filesystem::temp_directory_path() / "deepinfer_bench_v4").string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config.dump(1);
  Writer w;
  w.add("model.embed_tokens.weight", {V, H});
  w.add("head.weight", {V, H});
  w.add("model.norm.weight", {H});
  w.add("model.hc_head.hc_fn", {HC, HC * H});
  w.add("model.hc_head.hc_base", {HC});
  w.add("model.hc_head.hc_scale", {1});
  for (int l = 0; l < 4; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char* s : {"attn_norm.weight", "ffn_norm.weight"}) w.add(p + s, {H});
    for (const char* site : {"attn", "ffn"}) {
      w.add(p + "hc_" + site + "_fn", {MIX, HC * H});
      w.add(p + "hc_" + site + "_base", {MIX});
      w.add(p + "hc_" + site + "_scale", {3});
    }
    w.add(p + "attn.wq_a.weight", {QL, H});
    w.add(p + "attn.q_norm.weight", {QL});
    w.add(p + "attn.wq_b.weight", {NH * HD, QL});
    w.add(p + "attn.wkv.weight", {HD, H});
    w.add(p + "attn.kv_norm.weight", {HD});
    w.add(p + "attn.wo_a.weight", {OG * OL, NH * HD / OG});
    w.add(p + "attn.wo_b.weight", {H, OG * OL});
    w.add(p + "attn.attn_sink", {NH});
    const bool csa = types[l] == "compressed_sparse_attention", hca = types[l] == "heavily_compressed_attention";
    if (csa || hca) {
      const int64_t width = csa ? 2 * HD : HD, rate = csa ? 4 : 128;
      w.add(p + "attn.compressor.wkv.weight", {width, H});
      w.add(p + "attn.compressor.wgate.weight", {width, H});
      w.add(p + "attn.compressor.ape", {rate, width});
      w.add(p + "attn.compressor.norm.weight", {HD});
    }
    if (csa) {
      w.add(p + "attn.indexer.compressor.wkv.weight", {2 * IHD, H});
      w.add(p + "attn.indexer.compressor.wgate.weight", {2 * IHD, H});
      w.add(p + "attn.indexer.compressor.ape", {4, 2 * IHD});
      w.add(p + "attn.indexer.compressor.norm.weight", {IHD});
      w.add(p + "attn.indexer.wq_b.weight", {IH * IHD, QL});
      w.add(p + "attn.indexer.weights_proj.weight", {IH, H});
    }
    w.add(p + "ffn.gate.weight", {E, H});
    if (l == 0) w.add(p + "ffn.gate.tid2eid", {V, K});
    else w.add(p + "ffn.gate.bias", {E});
    for (int e = 0; e <= E; ++e) {
      const std::string q = e < E ? p + "ffn.experts." + std::to_string(e) + "." : p + "ffn.shared_experts.";
      w.add(q + "w1.weight", {I, H});
      w.add(q + "w2.weight", {H, I});
      w.add(q + "w3.weight", {I, H});
    }
  }
  std::mt19937 rng(7);
  const int64_t params = w.write(dir + "/model.safetensors", rng);

  di::engine::ModelOptions options;
  options.num_threads = threads;
  auto loaded = di::engine::load_model(dir, options);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "load: %s\n", loaded.status().message().c_str());
    return 1;
  }
  di::engine::Model& model = **loaded;
  std::vector<int32_t> ids(prefill + decode);
  for (auto& id : ids) id = static_cast<int32_t>(rng() % V);
  std::vector<float> logits;
  double prefill_s = 0, decode_s = 0;
  for (int rep = 0; rep < 2; ++rep) {  // the first run warms pages and caches
    di::engine::ContiguousSequenceCache cache(model.cache_groups(), prefill + decode);
    di::engine::ForwardBatch b;
    b.seqs.push_back({ids.data(), prefill, 0, &cache, false});
    auto t0 = Clock::now();
    if (!model.forward(b, logits).is_ok()) return 1;
    prefill_s = seconds_since(t0);
    t0 = Clock::now();
    for (int i = 0; i < decode; ++i) {
      di::engine::ForwardBatch d;
      d.seqs.push_back({ids.data() + prefill + i, 1, prefill + i, &cache, false});
      if (!model.forward(d, logits).is_ok()) return 1;
    }
    decode_s = seconds_since(t0);
  }

  // Ceilings on this machine now: the linear kernel on a square product, and read bandwidth.
  const int64_t n = 1024;
  std::vector<float> a(n * n, 0.5f), bm(n * n, 0.25f), c(n * n);
  di::kernels::cpu::set_num_threads(threads);
  auto t0 = Clock::now();
  di::kernels::cpu::linear(a.data(), n, n, bm.data(), n, c.data());
  const double gflops = 2.0 * n * n * n / seconds_since(t0) / 1e9;
  std::vector<float> big(64 << 20, 1.0f);
  double sum = 0;
  t0 = Clock::now();
  std::vector<double> part(threads, 0.0);
  for (int r = 0; r < 2; ++r)  // read with the same threads the model uses
    di::kernels::cpu::parallel_for(threads, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t n0 = big.size() * t / threads, n1 = big.size() * (t + 1) / threads;
        part[t] += di::kernels::cpu::dot(big.data() + n0, big.data() + n0, n1 - n0);
      }
    });
  for (double p : part) sum += p;
  const double gbps = 2.0 * 2 * big.size() * 4 / seconds_since(t0) / 1e9;  // dot(x, x) reads x once per pass

  // Decode reads every non-expert weight once plus K routed and the shared expert per layer.
  const int64_t expert = 3 * H * I;
  const int64_t read_params = params - 4 * (E - K) * expert;
  const double floor_ms = read_params * 4.0 / (gbps * 1e9) * 1e3;
  const double decode_ms = decode_s / decode * 1e3;
  const double prefill_tps = prefill / prefill_s, decode_tps = decode / decode_s;
  std::printf("deepseek_v4 CPU, %d threads, %.1fM params fp32 (hidden %lld, 4 layers CSA/HCA/SWA/CSA, hc 4)\n",
              threads, params / 1e6, static_cast<long long>(H));
  std::printf("prefill %d tokens: %.1f tokens/s (%.2f s)\n", prefill, prefill_tps, prefill_s);
  std::printf("decode: %.2f tokens/s, %.1f ms/token; floor %.1f ms at %.1f GB/s read (%.0f%%)\n", decode_tps,
              decode_ms, floor_ms, gbps, 100.0 * floor_ms / decode_ms);
  std::printf("linear kernel 1024^3: %.1f GFLOP/s (checksum %.0f)\n", gflops, sum + c[0]);
  if (cl.results) {
    char row[768];
    std::snprintf(row, sizeof row,
                  "%s, %d threads | deepseek_v4 CPU fp32, random %.0fM params (hidden %lld, "
                  "CSA/HCA/SWA/CSA, hc 4), decode b=1 after a %d-token prefill | %.1f ms/token (%.2f tok/s); "
                  "prefill %.1f tok/s | floor %.1f ms (weights at %.1f GB/s read) | %.0f%% | linear kernel "
                  "%.1f GFLOP/s on 1024^3 |\n",
                  cl.results->row_start().c_str(), threads, params / 1e6, static_cast<long long>(H), prefill, decode_ms,
                  decode_tps, prefill_tps, floor_ms, gbps, 100.0 * floor_ms / decode_ms, gflops);
    cl.results->append(row);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
