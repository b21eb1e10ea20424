// A DeepSeek-V4 checkpoint on disk with made-up weights, for timing the load path: DeepSeek's own
// tensor names, sharded with model.safetensors.index.json, either all bf16 or as DeepSeek ships
// V4-Flash (attention, shared experts and the indexer's wq_b fp8 e4m3 with ue8m0 128 x 128
// scales; routed experts packed fp4 with ue8m0 scales per 32 inputs; the rest bf16 / fp32).
// Values are bit patterns that decode to small finite numbers (no NaN codes, fp4 scales within
// one binade so the fp4 -> fp8 re-encoding is exact); the data is streamed, never held whole.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/deepseek_v4/config.h"

namespace di::bench {

struct SyntheticTensor {
  std::string name, dtype;  // safetensors dtype text
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  int64_t id_range = 0;  // I32 routing tables: ids in [0, id_range)
};

// The tensors of config `c` (layer kinds and sizes as its fields say) under DeepSeek's names.
inline std::vector<SyntheticTensor> v4_tensors(const engine::deepseek_v4::DeepseekV4Config& c, bool quantized) {
  using engine::deepseek_v4::AttnType;
  using engine::deepseek_v4::MlpType;
  std::vector<SyntheticTensor> ts;
  auto elem = [](const std::string& d) -> int64_t {
    return d == "F32" || d == "I32" ? 4 : d == "BF16" ? 2 : 1;
  };
  auto add = [&](const std::string& name, const std::string& dtype, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    ts.push_back({name, dtype, std::move(shape), n * elem(dtype)});
  };
  auto fp8 = [&](const std::string& base, int64_t out, int64_t in) {
    if (!quantized) return add(base + ".weight", "BF16", {out, in});
    add(base + ".weight", "F8_E4M3", {out, in});
    add(base + ".scale", "F8_E8M0", {(out + 127) / 128, (in + 127) / 128});
  };
  auto fp4 = [&](const std::string& base, int64_t out, int64_t in) {
    if (!quantized) return add(base + ".weight", "BF16", {out, in});
    add(base + ".weight", "I8", {out, in / 2});
    add(base + ".scale", "F8_E8M0", {out, in / 32});
  };
  const int64_t h = c.hidden_size, hc = c.hc_mult, mix = (2 + hc) * hc, nh = c.num_attention_heads;
  const int64_t hd = c.head_dim, qlr = c.q_lora_rank, og = c.o_groups, olr = c.o_lora_rank;
  const int64_t E = c.n_routed_experts, inter = c.moe_intermediate_size, V = c.vocab_size;
  add("embed.weight", "BF16", {V, h});
  add("head.weight", "BF16", {V, h});
  add("norm.weight", "BF16", {h});
  add("hc_head_fn", "F32", {hc, hc * h});
  add("hc_head_base", "F32", {hc});
  add("hc_head_scale", "F32", {1});
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".", a = p + "attn.", f = p + "ffn.";
    add(p + "attn_norm.weight", "BF16", {h});
    add(p + "ffn_norm.weight", "BF16", {h});
    for (const char* site : {"attn", "ffn"}) {
      add(p + "hc_" + site + "_fn", "F32", {mix, hc * h});
      add(p + "hc_" + site + "_base", "F32", {mix});
      add(p + "hc_" + site + "_scale", "F32", {3});
    }
    fp8(a + "wq_a", qlr, h);
    add(a + "q_norm.weight", "BF16", {qlr});
    fp8(a + "wq_b", nh * hd, qlr);
    fp8(a + "wkv", hd, h);
    add(a + "kv_norm.weight", "BF16", {hd});
    fp8(a + "wo_a", og * olr, nh * hd / og);
    fp8(a + "wo_b", h, og * olr);
    add(a + "attn_sink", "F32", {nh});
    auto compressor = [&](const std::string& pre, int64_t dim, int64_t rate, bool overlap) {
      const int64_t width = overlap ? 2 * dim : dim;
      add(a + pre + "wkv.weight", "BF16", {width, h});
      add(a + pre + "wgate.weight", "BF16", {width, h});
      add(a + pre + "ape", "F32", {rate, width});
      add(a + pre + "norm.weight", "BF16", {dim});
    };
    const AttnType t = c.layer_types[l];
    if (t != AttnType::kSliding) {
      const bool csa = t == AttnType::kCSA;
      compressor("compressor.", hd, csa ? c.compress_rate_csa : c.compress_rate_hca, csa);
      if (csa) {
        compressor("indexer.compressor.", c.index_head_dim, c.compress_rate_csa, true);
        fp8(a + "indexer.wq_b", int64_t{c.index_n_heads} * c.index_head_dim, qlr);
        add(a + "indexer.weights_proj.weight", "BF16", {c.index_n_heads, h});
      }
    }
    add(f + "gate.weight", "BF16", {E, h});
    if (c.mlp_layer_types[l] == MlpType::kHashMoe) {
      add(f + "gate.tid2eid", "I32", {V, c.num_experts_per_tok});
      ts.back().id_range = E;
    } else {
      add(f + "gate.bias", "F32", {E});
    }
    for (int64_t e = 0; e < E; ++e) {
      const std::string x = f + "experts." + std::to_string(e) + ".";
      fp4(x + "w1", inter, h);
      fp4(x + "w2", h, inter);
      fp4(x + "w3", inter, h);
    }
    fp8(f + "shared_experts.w1", inter, h);
    fp8(f + "shared_experts.w2", h, inter);
    fp8(f + "shared_experts.w3", inter, h);
  }
  return ts;
}

// config.json for `c` as DeepSeek's V4 configs spell it (layer kinds as compress_ratios).
inline nlohmann::json v4_config_json(const engine::deepseek_v4::DeepseekV4Config& c, bool quantized) {
  using engine::deepseek_v4::AttnType;
  using engine::deepseek_v4::MlpType;
  nlohmann::json j = {{"architectures", {"DeepseekV4ForCausalLM"}},
                      {"model_type", "deepseek_v4"},
                      {"vocab_size", c.vocab_size},
                      {"hidden_size", c.hidden_size},
                      {"num_hidden_layers", c.num_hidden_layers},
                      {"num_attention_heads", c.num_attention_heads},
                      {"num_key_value_heads", 1},
                      {"head_dim", c.head_dim},
                      {"qk_rope_head_dim", c.qk_rope_head_dim},
                      {"q_lora_rank", c.q_lora_rank},
                      {"o_groups", c.o_groups},
                      {"o_lora_rank", c.o_lora_rank},
                      {"moe_intermediate_size", c.moe_intermediate_size},
                      {"n_routed_experts", c.n_routed_experts},
                      {"num_experts_per_tok", c.num_experts_per_tok},
                      {"n_shared_experts", 1},
                      {"sliding_window", c.sliding_window},
                      {"hc_mult", c.hc_mult},
                      {"index_n_heads", c.index_n_heads},
                      {"index_head_dim", c.index_head_dim},
                      {"index_topk", c.index_topk},
                      {"compress_rates", {{"compressed_sparse_attention", c.compress_rate_csa},
                                          {"heavily_compressed_attention", c.compress_rate_hca}}},
                      {"max_position_embeddings", 65536},
                      {"num_nextn_predict_layers", 0},
                      {"tie_word_embeddings", false},
                      {"dtype", "bfloat16"}};
  std::vector<int> ratios;
  int hash = 0;
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    ratios.push_back(c.layer_types[l] == AttnType::kSliding ? 0 : c.layer_types[l] == AttnType::kCSA ? 4 : 128);
    hash += c.mlp_layer_types[l] == MlpType::kHashMoe;
  }
  j["compress_ratios"] = ratios;
  j["num_hash_layers"] = hash;
  if (quantized) {
    j["expert_dtype"] = "fp4";
    j["quantization_config"] = {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"quant_method", "fp8"},
                                {"scale_fmt", "ue8m0"}, {"weight_block_size", {128, 128}}};
  }
  return j;
}

// Bytes that decode to small finite values of tensor dtype `dtype`, from a xorshift stream.
inline void fill_plausible(const std::string& dtype, uint64_t& state, uint8_t* out, int64_t n, int64_t offset,
                           const SyntheticTensor& t) {
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  if (dtype == "BF16") {  // |x| in [2^-7, 2^-6), random sign and mantissa
    for (int64_t i = 0; i + 1 < n; i += 2) {
      const uint16_t v = static_cast<uint16_t>((next() & 0x807f) | 0x3c00);
      std::memcpy(out + i, &v, 2);
    }
  } else if (dtype == "F32") {
    const float v = 0.01f;
    for (int64_t i = 0; i + 3 < n; i += 4) std::memcpy(out + i, &v, 4);
  } else if (dtype == "I32") {  // tid2eid: row r routes to experts r, r + 1, ... (mod E), distinct
    const int64_t k = t.shape[1];
    for (int64_t i = 0; i + 3 < n; i += 4) {
      const int64_t idx = (offset + i) / 4;
      const int32_t v = static_cast<int32_t>((idx / k + idx % k) % t.id_range);
      std::memcpy(out + i, &v, 4);
    }
  } else if (dtype == "F8_E8M0") {  // scales 2^-7 .. 2^-4: any block spans < 14 binades
    for (int64_t i = 0; i < n; i += 8) {
      uint64_t r = next();
      for (int64_t j = i; j < std::min(n, i + 8); ++j, r >>= 8) out[j] = static_cast<uint8_t>(120 + (r & 3));
    }
  } else {  // F8_E4M3 (exponent bit 3 clear: no NaN code) and packed fp4 (every byte is valid)
    const uint8_t mask = dtype == "F8_E4M3" ? 0xbf : 0xff;
    for (int64_t i = 0; i < n; i += 8) {
      uint64_t r = next();
      for (int64_t j = i; j < std::min(n, i + 8); ++j, r >>= 8) out[j] = static_cast<uint8_t>(r) & mask;
    }
  }
}

// Writes `tensors` into `dir` as shards of about `shard_bytes` each plus the index, and
// config.json; returns the bytes of the .safetensors files.
inline int64_t write_synthetic_checkpoint(const std::string& dir, const nlohmann::json& config,
                                          const std::vector<SyntheticTensor>& tensors, int64_t shard_bytes) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config.dump(1);
  std::vector<std::vector<const SyntheticTensor*>> shards(1);
  int64_t in_shard = 0;
  for (const SyntheticTensor& t : tensors) {
    if (in_shard > 0 && in_shard + t.bytes > shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(&t);
    in_shard += t.bytes;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  int64_t file_bytes = 0, total = 0;
  std::vector<uint8_t> buf(size_t{16} << 20);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  char fn[64];
  for (size_t s = 0; s < shards.size(); ++s) {
    std::snprintf(fn, sizeof fn, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    nlohmann::json header = nlohmann::json::object();
    int64_t off = 0;
    for (const SyntheticTensor* t : shards[s]) {
      header[t->name] = {{"dtype", t->dtype}, {"shape", t->shape}, {"data_offsets", {off, off + t->bytes}}};
      off += t->bytes;
      weight_map[t->name] = fn;
    }
    std::string h = header.dump();
    while (h.size() % 8) h += ' ';
    std::ofstream out(dir + "/" + fn, std::ios::binary);
    const uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << h;
    for (const SyntheticTensor* t : shards[s])
      for (int64_t done = 0; done < t->bytes;) {
        const int64_t step = std::min<int64_t>(static_cast<int64_t>(buf.size()), t->bytes - done);
        fill_plausible(t->dtype, state, buf.data(), step, done, *t);
        out.write(reinterpret_cast<const char*>(buf.data()), step);
        done += step;
      }
    if (!out) return -1;
    file_bytes += static_cast<int64_t>(8 + h.size()) + off;
    total += off;
  }
  std::ofstream(dir + "/model.safetensors.index.json")
      << nlohmann::json{{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}}.dump(1);
  return file_bytes;
}

}  // namespace di::bench
