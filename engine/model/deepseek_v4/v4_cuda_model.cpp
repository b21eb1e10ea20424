// V4CudaModel: weight upload and the layer loop on the GPU. See v4_cuda_model.h. Each step
// mirrors the CPU model's function of the same name (attention.cpp, compressor.cpp,
// hyper_connection.cpp, moe.cpp) in the same order, so fp32 results agree to rounding; every
// kernel runs once for all rows of the step (kernels/cuda/*_varlen, moe_grouped).
#ifdef DI_WITH_CUDA

#include "engine/model/deepseek_v4/v4_cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/model/batch_check.h"
#include "engine/model/cuda/graph_buckets.h"
#include "engine/model/cuda/workspace.h"
#include "engine/model/deepseek_v4/v4_model.h"
#include "kernels/cuda/cache_rows.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/fp8_linear.h"
#include "kernels/cuda/hyper_connection.h"
#include "kernels/cuda/indexer_topk.h"
#include "kernels/cuda/kv_compress_varlen.h"
#include "kernels/cuda/moe_experts.h"
#include "kernels/cuda/moe_grouped.h"
#include "kernels/cuda/moe_routing.h"
#include "kernels/cuda/rope_interleaved.h"
#include "kernels/cuda/sink_attention_varlen.h"

namespace di::engine::deepseek_v4 {
namespace kc = di::kernels::cuda;
using kc::DType;
using namespace v4_cuda;

namespace {

constexpr int64_t kActivationReserve = int64_t{2} << 30;  // workspaces besides the caches

}  // namespace

V4CudaModel::V4CudaModel(DeepseekV4Config config, DType dtype, const ModelOptions& options, std::string model_dir)
    : DeviceModel(dtype, options, kActivationReserve), config_(std::move(config)), weights_(dtype) {
  const DeepseekV4Config& c = config_;
  set_info("deepseek_v4", std::move(model_dir), c);
  ropes_.main = Rope(c.rope_main);
  ropes_.compress = Rope(c.rope_compress);
  groups_ = make_cache_groups(c, &layout_);
  enforce_eager_ = options.enforce_eager;
}

// graphs_, a member, goes before the base class destroys the stream it captured on.
V4CudaModel::~V4CudaModel() = default;

Status V4CudaModel::init_device() {
  DI_RETURN_IF_ERROR(open_stream());
  DI_RETURN_IF_ERROR(bad_id_.init());
  DI_RETURN_IF_ERROR(upload_f32(ropes_.main.inv_freq(), inv_freq_main_));
  return upload_f32(ropes_.compress.inv_freq(), inv_freq_compress_);
}

Status V4CudaModel::upload(const DeepseekV4Weights& w) {
  const DeepseekV4Config& c = config_;
  const int64_t H = c.hidden_size, V = c.vocab_size, hc = c.hc_mult, mix = (2 + hc) * hc;
  const int64_t nh = c.num_attention_heads, hd = c.head_dim, qlr = c.q_lora_rank;
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok;
  // A matrix [vocab, hidden] as the loader kept it: fp32 host values, or BF16 as stored.
  auto put_vocab = [&](const float* f32, const kernels::LinearWeight& stored, const char* name) -> Result<const void*> {
    if (f32) return weights_.put(f32, V * H);
    const kernels::LinearWeight* parts[] = {&stored};
    DI_ASSIGN_OR_RETURN(cuda::DeviceLinear d, cuda::upload_linear(weights_, parts, name, stream_));
    return d.dense;
  };
  DI_ASSIGN_OR_RETURN(embed_, put_vocab(w.embed, w.embed_stored, "embed"));
  if (w.head == w.embed && w.head_stored.data == w.embed_stored.data) {
    head_ = embed_;
  } else {
    DI_ASSIGN_OR_RETURN(head_, put_vocab(w.head, w.head_stored, "head"));
  }
  DI_ASSIGN_OR_RETURN(norm_, weights_.put_f32(w.norm, H));
  DI_ASSIGN_OR_RETURN(hc_head_.fn, weights_.put_f32(w.hc_head_fn, hc * hc * H));
  DI_ASSIGN_OR_RETURN(hc_head_.base, weights_.put_f32(w.hc_head_base, hc));
  DI_ASSIGN_OR_RETURN(hc_head_.scale, weights_.put_f32(w.hc_head_scale, 1));
  auto put_hc = [&](const HcWeights& h, V4CudaHc& d) -> Status {
    DI_ASSIGN_OR_RETURN(d.fn, weights_.put_f32(h.fn, mix * hc * H));
    DI_ASSIGN_OR_RETURN(d.base, weights_.put_f32(h.base, mix));
    DI_ASSIGN_OR_RETURN(d.scale, weights_.put_f32(h.scale, 3));
    return Status::ok();
  };
  auto put_compressor = [&](const CompressorWeights& h, V4CudaCompressor& d) -> Status {
    const int64_t width = h.overlap ? 2 * h.dim : h.dim;
    d.dim = h.dim;
    d.rate = h.rate;
    d.overlap = h.overlap;
    DI_ASSIGN_OR_RETURN(d.wkv, weights_.put(h.wkv, width * H));
    DI_ASSIGN_OR_RETURN(d.wgate, weights_.put(h.wgate, width * H));
    DI_ASSIGN_OR_RETURN(d.ape, weights_.put_f32(h.ape, int64_t{h.rate} * width));
    DI_ASSIGN_OR_RETURN(d.norm, weights_.put_f32(h.norm, h.dim));
    return Status::ok();
  };
  int64_t largest_fp8 = 0;
  auto put_linear = [&](std::initializer_list<const kernels::LinearWeight*> parts, const std::string& name,
                        cuda::DeviceLinear& d) -> Status {
    DI_ASSIGN_OR_RETURN(d, cuda::upload_linear(weights_, std::span(parts.begin(), parts.size()), name, stream_));
    if (d.is_fp8()) largest_fp8 = std::max(largest_fp8, d.out * d.in);
    return Status::ok();
  };
  auto put_expert = [&](const ExpertWeights& h, V4CudaExpert& d, const std::string& name) -> Status {
    DI_RETURN_IF_ERROR(put_linear({&h.w1, &h.w3}, name + ".w1|w3", d.w13));
    return put_linear({&h.w2}, name + ".w2", d.w2);
  };
  // One decoder block: a main layer (layers.N.) or the MTP layer's (mtp.0.), by `label`.
  auto put_layer = [&](const LayerWeights& h, AttnType type, const std::string& label, V4CudaLayer& d) -> Status {
    DI_ASSIGN_OR_RETURN(d.attn_norm, weights_.put_f32(h.attn_norm, H));
    DI_ASSIGN_OR_RETURN(d.ffn_norm, weights_.put_f32(h.ffn_norm, H));
    DI_RETURN_IF_ERROR(put_hc(h.hc_attn, d.hc_attn));
    DI_RETURN_IF_ERROR(put_hc(h.hc_ffn, d.hc_ffn));
    const AttentionWeights& a = h.attn;
    const std::string at = label + ".attn.";
    DI_RETURN_IF_ERROR(put_linear({&a.wq_a}, at + "wq_a", d.wq_a));
    DI_ASSIGN_OR_RETURN(d.q_norm, weights_.put_f32(a.q_norm, qlr));
    DI_RETURN_IF_ERROR(put_linear({&a.wq_b}, at + "wq_b", d.wq_b));
    DI_RETURN_IF_ERROR(put_linear({&a.wkv}, at + "wkv", d.wkv));
    DI_ASSIGN_OR_RETURN(d.kv_norm, weights_.put_f32(a.kv_norm, hd));
    DI_RETURN_IF_ERROR(put_linear({&a.wo_a}, at + "wo_a", d.wo_a));
    DI_RETURN_IF_ERROR(put_linear({&a.wo_b}, at + "wo_b", d.wo_b));
    DI_ASSIGN_OR_RETURN(d.sinks, weights_.put_f32(a.sinks, nh));
    if (type != AttnType::kSliding) DI_RETURN_IF_ERROR(put_compressor(a.compressor, d.compressor));
    if (type == AttnType::kCSA) {
      DI_RETURN_IF_ERROR(put_compressor(a.indexer, d.indexer));
      DI_RETURN_IF_ERROR(put_linear({&a.index_wq_b}, at + "indexer.wq_b", d.index_wq_b));
      DI_ASSIGN_OR_RETURN(d.index_weights_proj, weights_.put(a.index_weights_proj, int64_t{c.index_n_heads} * H));
    }
    const MoeWeights& m = h.ffn;
    DI_ASSIGN_OR_RETURN(d.gate, weights_.put(m.gate, E * H));
    if (m.tid2eid) {
      DI_ASSIGN_OR_RETURN(d.tid2eid, weights_.put_i32(m.tid2eid, V * K));
    } else {
      DI_ASSIGN_OR_RETURN(d.gate_bias, weights_.put_f32(m.bias, E));
    }
    d.experts.resize(E);
    const std::string ffn = label + ".ffn.";
    for (int64_t e = 0; e < E; ++e)
      DI_RETURN_IF_ERROR(put_expert(m.experts[e], d.experts[e], ffn + "experts." + std::to_string(e)));
    return put_expert(m.shared, d.shared, ffn + "shared_experts");
  };
  layers_.resize(c.num_hidden_layers + (w.mtp_layers.empty() ? 0 : 1));
  for (int32_t l = 0; l < c.num_hidden_layers; ++l)
    DI_RETURN_IF_ERROR(put_layer(w.layers[l], c.layer_types[l], "layers." + std::to_string(l), layers_[l]));
  if (!w.mtp_layers.empty()) {
    // MTP layer 0 only: DeepSeek drafts with its one MTP layer applied recursively.
    const MtpLayerWeights& h = w.mtp_layers[0];
    DI_RETURN_IF_ERROR(put_layer(h.block, AttnType::kSliding, "mtp.0", layers_[c.num_hidden_layers]));
    DI_RETURN_IF_ERROR(put_linear({&h.e_proj}, "mtp.0.e_proj", mtp_.e_proj));
    DI_RETURN_IF_ERROR(put_linear({&h.h_proj}, "mtp.0.h_proj", mtp_.h_proj));
    DI_ASSIGN_OR_RETURN(mtp_.enorm, weights_.put_f32(h.enorm, H));
    DI_ASSIGN_OR_RETURN(mtp_.hnorm, weights_.put_f32(h.hnorm, H));
    DI_ASSIGN_OR_RETURN(mtp_.norm, weights_.put_f32(h.norm, H));
    DI_ASSIGN_OR_RETURN(mtp_.head.fn, weights_.put_f32(h.hc_head_fn, hc * hc * H));
    DI_ASSIGN_OR_RETURN(mtp_.head.base, weights_.put_f32(h.hc_head_base, hc));
    DI_ASSIGN_OR_RETURN(mtp_.head.scale, weights_.put_f32(h.hc_head_scale, 1));
    has_mtp_ = true;
  }
  mtp_unavailable_ = w.mtp_unavailable;
  return reserve_dequant_stage(largest_fp8);
}

Result<std::unique_ptr<Model>> V4CudaModel::load(const std::string& model_dir, DeepseekV4Config config,
                                                 std::unique_ptr<DeepseekV4Weights> host,
                                                 const ModelOptions& options) {
  DI_RETURN_IF_ERROR(check_at_most("hc_mult", config.hc_mult, kc::kMaxHcStreams));
  DI_RETURN_IF_ERROR(check_at_most("num_experts_per_tok", config.num_experts_per_tok, kc::kMaxRoutedPerToken));
  DType dtype = DType::kBF16;
  for (const char* name : {"model.embed_tokens.weight", "embed.weight", "model.embed.weight"})
    if (const TensorView* t = host->store.checkpoint->find(name))
      dtype = t->dtype == engine::DType::kF32 ? DType::kF32 : DType::kBF16;
  const int32_t num_layers = config.num_hidden_layers;
  std::unique_ptr<V4CudaModel> m(new V4CudaModel(std::move(config), dtype, options, model_dir));
  DI_RETURN_IF_ERROR(m->check_memory(*host->store.checkpoint, num_layers, !host->mtp_layers.empty()));
  m->fp8_pow2_scales_ = true;  // DeepSeek-V4 quantizes its activations with ue8m0 (power-of-two) scales
  // The MTP layer's sliding-ring rows follow the main layers' (as the CPU model declares them).
  m->groups_ = make_cache_groups(m->config_, &m->layout_, host->mtp_layers.empty() ? 0 : 1);
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->upload(*host));
  DI_RETURN_IF_ERROR(m->build_expert_tables());
  return std::unique_ptr<Model>(std::move(m));
}

// Per layer four device arrays of E pointers: w13 codes or values, w2's, then (fp8) their scales.
Status V4CudaModel::build_expert_tables() {
  const int64_t L = static_cast<int64_t>(layers_.size()), E = config_.n_routed_experts;
  std::vector<const void*> table(static_cast<size_t>(4 * L * E));
  auto data = [](const cuda::DeviceLinear& d) -> const void* { return d.is_fp8() ? d.fp8.data : d.dense; };
  for (int64_t l = 0; l < L; ++l)
    for (int64_t e = 0; e < E; ++e) {
      const V4CudaExpert& x = layers_[l].experts[e];
      table[(4 * l) * E + e] = data(x.w13);
      table[(4 * l + 1) * E + e] = data(x.w2);
      table[(4 * l + 2) * E + e] = x.w13.fp8.scale;
      table[(4 * l + 3) * E + e] = x.w2.fp8.scale;
    }
  DI_ASSIGN_OR_RETURN(const void* const* base, upload_table(table, expert_tables_));
  for (int64_t l = 0; l < L; ++l) {
    layers_[l].w13_table = base + (4 * l) * E;
    layers_[l].w2_table = base + (4 * l + 1) * E;
    layers_[l].w13_scale_table = reinterpret_cast<const float* const*>(base + (4 * l + 2) * E);
    layers_[l].w2_scale_table = reinterpret_cast<const float* const*>(base + (4 * l + 3) * E);
  }
  return Status::ok();
}

Status V4CudaModel::randomize(uint64_t seed, bool fp8_weights) {
  const DeepseekV4Config& c = config_;
  const int64_t H = c.hidden_size, V = c.vocab_size, hc = c.hc_mult, mix = (2 + hc) * hc;
  const int64_t nh = c.num_attention_heads, hd = c.head_dim, qlr = c.q_lora_rank, I = c.moe_intermediate_size;
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok;
  uint64_t next = seed;
  int64_t largest_fp8 = 0;
  // A matrix [n, k] scaled so that its products keep the activations' size.
  auto mat = [&](int64_t n, int64_t k) -> Result<const void*> {
    DI_ASSIGN_OR_RETURN(void* p, weights_.put_random(n * k, 0.f, 1.f / std::sqrt(static_cast<float>(k)), ++next,
                                                     false, stream_));
    return static_cast<const void*>(p);
  };
  auto lin = [&](int64_t n, int64_t k, int32_t block_rows = 128) -> Result<cuda::DeviceLinear> {
    if (fp8_weights) largest_fp8 = std::max(largest_fp8, n * k);
    return cuda::random_linear(weights_, n, k, fp8_weights, block_rows, ++next, stream_);
  };
  auto vec = [&](int64_t n, float offset, float scale) -> Result<const float*> {
    DI_ASSIGN_OR_RETURN(void* p, weights_.put_random(n, offset, scale, ++next, true, stream_));
    return static_cast<const float*>(p);
  };
  DI_ASSIGN_OR_RETURN(embed_, mat(V, H));
  DI_ASSIGN_OR_RETURN(head_, mat(V, H));
  DI_ASSIGN_OR_RETURN(norm_, vec(H, 1.f, 0.f));
  DI_ASSIGN_OR_RETURN(hc_head_.fn, vec(hc * hc * H, 0.f, 0.01f));
  DI_ASSIGN_OR_RETURN(hc_head_.base, vec(hc, 0.f, 0.1f));
  DI_ASSIGN_OR_RETURN(hc_head_.scale, vec(1, 1.f, 0.f));
  auto hc_w = [&](V4CudaHc& d) -> Status {
    DI_ASSIGN_OR_RETURN(d.fn, vec(mix * hc * H, 0.f, 0.01f));
    DI_ASSIGN_OR_RETURN(d.base, vec(mix, 0.f, 0.1f));
    DI_ASSIGN_OR_RETURN(d.scale, vec(3, 1.f, 0.f));
    return Status::ok();
  };
  auto compressor = [&](V4CudaCompressor& d, int32_t dim, int32_t rate, bool overlap) -> Status {
    const int64_t width = overlap ? 2 * dim : dim;
    d.dim = dim;
    d.rate = rate;
    d.overlap = overlap;
    DI_ASSIGN_OR_RETURN(d.wkv, mat(width, H));
    DI_ASSIGN_OR_RETURN(d.wgate, mat(width, H));
    DI_ASSIGN_OR_RETURN(d.ape, vec(int64_t{rate} * width, 0.f, 0.1f));
    DI_ASSIGN_OR_RETURN(d.norm, vec(dim, 1.f, 0.f));
    return Status::ok();
  };
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_int_distribution<int32_t> expert(0, static_cast<int32_t>(E - 1));
  layers_.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    V4CudaLayer& d = layers_[l];
    const AttnType t = c.layer_types[l];
    DI_ASSIGN_OR_RETURN(d.attn_norm, vec(H, 1.f, 0.f));
    DI_ASSIGN_OR_RETURN(d.ffn_norm, vec(H, 1.f, 0.f));
    DI_RETURN_IF_ERROR(hc_w(d.hc_attn));
    DI_RETURN_IF_ERROR(hc_w(d.hc_ffn));
    DI_ASSIGN_OR_RETURN(d.wq_a, lin(qlr, H));
    DI_ASSIGN_OR_RETURN(d.q_norm, vec(qlr, 1.f, 0.f));
    DI_ASSIGN_OR_RETURN(d.wq_b, lin(nh * hd, qlr));
    DI_ASSIGN_OR_RETURN(d.wkv, lin(hd, H));
    DI_ASSIGN_OR_RETURN(d.kv_norm, vec(hd, 1.f, 0.f));
    const int64_t per_group = nh * hd / c.o_groups;
    DI_ASSIGN_OR_RETURN(d.wo_a, lin(int64_t{c.o_groups} * c.o_lora_rank, per_group));
    DI_ASSIGN_OR_RETURN(d.wo_b, lin(H, int64_t{c.o_groups} * c.o_lora_rank));
    DI_ASSIGN_OR_RETURN(d.sinks, vec(nh, 0.f, 1.f));
    if (t == AttnType::kCSA) {
      DI_RETURN_IF_ERROR(compressor(d.compressor, c.head_dim, c.compress_rate_csa, true));
      DI_RETURN_IF_ERROR(compressor(d.indexer, c.index_head_dim, c.compress_rate_csa, true));
      DI_ASSIGN_OR_RETURN(d.index_wq_b, lin(int64_t{c.index_n_heads} * c.index_head_dim, qlr));
      DI_ASSIGN_OR_RETURN(d.index_weights_proj, mat(c.index_n_heads, H));
    } else if (t == AttnType::kHCA) {
      DI_RETURN_IF_ERROR(compressor(d.compressor, c.head_dim, c.compress_rate_hca, false));
    }
    DI_ASSIGN_OR_RETURN(d.gate, mat(E, H));
    if (c.mlp_layer_types[l] == MlpType::kHashMoe) {
      std::vector<int32_t> table(static_cast<size_t>(V * K));
      for (int32_t& e : table) e = expert(rng);
      DI_ASSIGN_OR_RETURN(d.tid2eid, weights_.put_i32(table.data(), V * K));
    } else {
      DI_ASSIGN_OR_RETURN(d.gate_bias, vec(E, 0.f, 0.01f));
    }
    d.experts.resize(E);
    for (int64_t e = 0; e <= E; ++e) {
      V4CudaExpert& x = e < E ? d.experts[e] : d.shared;
      const int32_t block_rows = e < E ? 1 : 128;  // routed experts ship as fp4
      DI_ASSIGN_OR_RETURN(x.w13, lin(2 * I, H, block_rows));
      DI_ASSIGN_OR_RETURN(x.w2, lin(H, I, block_rows));
    }
  }
  DI_RETURN_IF_ERROR(reserve_dequant_stage(largest_fp8));
  return kc::stream_synchronize(stream_);
}

Result<std::unique_ptr<V4CudaModel>> V4CudaModel::random(DeepseekV4Config config, DType dtype, uint64_t seed,
                                                         const ModelOptions& options, bool fp8_weights) {
  std::unique_ptr<V4CudaModel> m(new V4CudaModel(std::move(config), dtype, options, "<random>"));
  m->fp8_pow2_scales_ = true;
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->randomize(seed, fp8_weights));
  DI_RETURN_IF_ERROR(m->build_expert_tables());
  return m;
}

Status V4CudaModel::reserve(int64_t T, int64_t max_end, int64_t R, bool* moved) {
  const DeepseekV4Config& c = config_;
  bool has_csa = false, has_hca = false;
  for (AttnType t : c.layer_types) {
    has_csa |= t == AttnType::kCSA;
    has_hca |= t == AttnType::kHCA;
  }
  const int64_t H = c.hidden_size, hc = c.hc_mult, mix = (2 + hc) * hc, nh = c.num_attention_heads,
                hd = c.head_dim, qlr = c.q_lora_rank, og = c.o_groups, olr = c.o_lora_rank,
                nih = c.index_n_heads, ihd = c.index_head_dim, E = c.n_routed_experts, K = c.num_experts_per_tok,
                I = c.moe_intermediate_size, topk = c.index_topk;
  rows_ = T;
  max_end_ = max_end;
  logit_rows_ = R;
  max_visible_ = has_csa ? max_end / c.compress_rate_csa : 0;
  // Batch-invariant mode: grouped experts and one pass over each row's keys for every step.
  grouped_pairs_ = deterministic_ || T * K <= kGroupedPairsMax ? T * K : 0;
  const int64_t window_keys = std::min<int64_t>(max_end, c.sliding_window);
  int64_t max_keys = window_keys;
  if (has_hca) max_keys = std::max(max_keys, window_keys + max_end / c.compress_rate_hca);
  if (has_csa) max_keys = std::max(max_keys, window_keys + std::min<int64_t>(topk, max_visible_));
  splits_ = deterministic_ ? 1 : kc::sink_attention_varlen_splits(T, static_cast<int32_t>(nh), max_keys);
  const int64_t cw = 2 * std::max(hd, ihd);
  const int64_t max_k = std::max({H, qlr, nh * hd, og * olr, I, hc * H});  // hc * H: MTP's h_proj rows
  const int64_t gp = std::max<int64_t>(1, grouped_pairs_);
  // The bf16 models' experts one by one: every pair's row as bf16, and one expert's activation.
  const bool by_expert16 = grouped_pairs_ == 0 && dtype_ != DType::kF32;
  const int64_t mix_floats = std::max({T * mix, kc::hc_mix_parts(mix) * std::min(T, kc::kHcMixMaxRows) * mix, R * hc,
                                      kc::hc_mix_parts(hc) * std::min(R, kc::kHcMixMaxRows) * hc});
  std::vector<int64_t> floats = {T * hc * H, mix_floats, T * hc, T * hc * hc, T * H, T * H, T * qlr,
                                 T * nh * hd, T * hd, T * nh * hd, T * og * olr, T * 2 * cw, T * nih * ihd,
                                 T * nih, T * std::max<int64_t>(1, max_visible_),
                                 std::max<int64_t>(1, kc::sink_attention_varlen_partial_floats(
                                                          T, static_cast<int32_t>(nh), static_cast<int32_t>(hd), splits_)),
                                 T * E, T * K, T * H, T * 2 * I, T * I, T * H, T * K, gp * I, gp * H, R * hc * H,
                                 (T * H + 1) / 2, (T * qlr + 1) / 2, by_expert16 ? (T * K * H + 1) / 2 : 1,
                                 by_expert16 ? (T * I + 1) / 2 : 1, T * 2 * cw};
  std::vector<int64_t> ints = {T * std::max<int64_t>(1, topk), T, T * K, T * K, 2 * E + 2, gp};
  const void* before = act_.get();
  const int64_t stage_rows = std::max(T, R), bf16_stage = (stage_rows * max_k * 2 + 255) / 256 * 256;
  DI_ASSIGN_OR_RETURN(cuda::Workspace w,
                      cuda::Workspace::carve(act_, std::move(floats), std::move(ints),
                                             bf16_stage + fp8_stage_bytes(stage_rows, max_k)));
  Act& a = a_;
  a.streams = w.f32(), a.mixes = w.f32(), a.post = w.f32(), a.comb = w.f32(), a.x = w.f32(),
  a.out = w.f32(), a.qr = w.f32();
  a.q = w.f32(), a.kv = w.f32(), a.attn = w.f32(), a.grouped = w.f32(), a.ckv = w.f32(), a.iq = w.f32();
  a.iw = w.f32(), a.scores = w.f32(), a.partial = w.f32(), a.rlogits = w.f32(), a.ew = w.f32(), a.gx = w.f32(),
  a.gu = w.f32();
  a.act = w.f32(), a.y = w.f32(), a.erow_weights = w.f32(), a.pair_act = w.f32(), a.pair_y = w.f32(),
  a.head_streams = w.f32();
  a.x16 = w.f32(), a.qr16 = w.f32(), a.gx16 = w.f32(), a.act16 = w.f32();
  a.ickv = w.f32();
  a.selected = w.i32(), a.count = w.i32(), a.eids = w.i32(), a.erows = w.i32(), a.offsets = w.i32(),
  a.slot_pair = w.i32();
  linear_stage_ = w.rest();
  fp8_stage_ = static_cast<uint8_t*>(linear_stage_) + bf16_stage;
  const void* logits_before = logits_dev_.get();
  DI_RETURN_IF_ERROR(cuda::grow_buffer(logits_dev_, R * c.vocab_size * 4));
  *moved = act_.get() != before || logits_dev_.get() != logits_before;
  return Status::ok();
}

Result<float*> V4CudaModel::enqueue_forward(const ForwardBatch& batch, int64_t* rows) {
  const DeepseekV4Config& c = config_;
  DI_ASSIGN_OR_RETURN(const int64_t out_rows, check_batch(batch, info_.vocab_size, 0));
  *rows = out_rows;
  bad_id_.clear_host();
  if (out_rows == 0) return static_cast<float*>(nullptr);
  const int64_t S = static_cast<int64_t>(batch.seqs.size());
  // Decode steps replay CUDA graphs, and so do speculative decoding's verify steps: sequences of
  // one token or of a short run with a logits row per token (every row is then a logits row, so
  // the padded step's rows line up with its logits rows as a decode step's do).
  bool decode = S > 0, verify = S > 0;
  int64_t tokens = 0;
  for (const SequenceInput& s : batch.seqs) {
    decode &= s.num_tokens == 1;
    verify &= s.num_tokens == 1 || (s.all_logits && s.num_tokens <= kVerifyGraphMaxTokens);
    tokens += s.num_tokens;
  }
  const bool graphable = !enforce_eager_ && (decode || (kVerifyGraphs && verify));
  const int32_t bucket = graphable ? cuda::graph_bucket(tokens) : -1;
  const int32_t seq_bucket = graphable ? cuda::graph_bucket(S) : -1;
  const bool graph = bucket > 0 && seq_bucket > 0 && int64_t{bucket} * c.num_experts_per_tok <= kGroupedPairsMax;
  cur_ = &step_;
  DI_RETURN_IF_ERROR(step_.pack(batch, groups_, graph ? bucket : 0, graph ? seq_bucket : 0));
  DI_RETURN_IF_ERROR(stage_step(
      step_, graph, graph ? step_.device().num_tokens : out_rows,
      [&](int64_t T, int64_t ctx, int64_t R, bool* moved) { return reserve(T, ctx, R, moved); }, graphs_));
  if (graph) {
    // The padded sequence count is a kernel argument too (TokenBatch::num_seqs).
    DI_RETURN_IF_ERROR(graphs_.launch({rows_, seq_bucket, max_end_}, stream_, [&] { return run_step(true); }));
  } else {
    DI_RETURN_IF_ERROR(run_step(grouped_pairs_ > 0));
  }
  DI_RETURN_IF_ERROR(keep_hidden(batch));
  DI_RETURN_IF_ERROR(bad_id_.copy_to_host(stream_));
  return logits_dev_.as<float>();
}

Status V4CudaModel::check_forward() { return bad_id_.check("deepseek_v4"); }

Status V4CudaModel::hc_pre(const V4CudaHc& hc) {
  const DeepseekV4Config& c = config_;
  const int64_t T = rows_, W = int64_t{c.hc_mult} * c.hidden_size, mix = (2 + int64_t{c.hc_mult}) * c.hc_mult;
  // The streams' RMSNorm is a per-row scalar: hc_pre applies it to the mixing logits.
  DI_ASSIGN_OR_RETURN(const int32_t parts, mix_logits(a_.streams, T, W, hc.fn, mix));
  return kc::hc_pre(a_.mixes, parts, hc.base, hc.scale, a_.streams, T, c.hc_mult, c.hidden_size, c.hc_sinkhorn_iters,
                    static_cast<float>(c.hc_eps), a_.x, a_.post, a_.comb, stream_, static_cast<float>(c.rms_norm_eps));
}

Result<int32_t> V4CudaModel::mix_logits(const float* streams, int64_t rows, int64_t width, const float* fn,
                                        int64_t out) {
  // Batch-invariant mode keeps every row count on the GEMM: a row's bits must not depend on
  // whether its step had few rows.
  if (!deterministic_ && kc::hc_mix_fits(rows, width, out, streams, fn)) {
    DI_RETURN_IF_ERROR(kc::hc_mix(streams, rows, width, fn, out, a_.mixes, stream_));
    return kc::hc_mix_parts(out);
  }
  DI_RETURN_IF_ERROR(gemm_.linear(streams, rows, width, width, fn, out, DType::kF32, a_.mixes, out, DType::kF32));
  return 1;
}

Status V4CudaModel::norm_staged(float* x, const float* weight, void* x16, int64_t rows, int64_t dim) {
  const float eps = static_cast<float>(config_.rms_norm_eps);
  if (dtype_ == DType::kF32) return kc::rms_norm(x, weight, x, rows, 1, dim, dim, eps, DType::kF32, stream_);
  return kc::rms_norm_with_bf16(x, weight, x, x16, rows, dim, eps, stream_);
}

Status V4CudaModel::proj(const float* x, const void* x16, int64_t rows, int64_t K, const void* w, int64_t N, float* y) {
  if (dtype_ == DType::kF32) return gemm_.linear(x, rows, K, K, w, N, DType::kF32, y, N, DType::kF32);
  return gemm_.linear(x16, rows, K, K, w, N, dtype_, y, N, DType::kF32);
}

Status V4CudaModel::run_step(bool grouped_moe) {
  const DeepseekV4Config& c = config_;
  const int64_t T = rows_, H = c.hidden_size;
  DI_RETURN_IF_ERROR(kc::hc_embed(cur_->device().ids, T, embed_, H, c.hc_mult, dtype_, a_.streams, stream_));
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) DI_RETURN_IF_ERROR(run_layer(l, grouped_moe));
  return head(hc_head_, norm_);
}

Status V4CudaModel::run_layer(int32_t l, bool grouped_moe) {
  const DeepseekV4Config& c = config_;
  const int64_t T = rows_, H = c.hidden_size;
  const V4CudaLayer& w = layers_[l];
  DI_RETURN_IF_ERROR(hc_pre(w.hc_attn));
  DI_RETURN_IF_ERROR(norm_staged(a_.x, w.attn_norm, a_.x16, T, H));
  DI_RETURN_IF_ERROR(attention(l));
  DI_RETURN_IF_ERROR(kc::hc_post(a_.out, a_.post, a_.comb, T, c.hc_mult, H, a_.streams, stream_));
  DI_RETURN_IF_ERROR(hc_pre(w.hc_ffn));
  DI_RETURN_IF_ERROR(norm_staged(a_.x, w.ffn_norm, a_.x16, T, H));
  DI_RETURN_IF_ERROR(moe(l, grouped_moe));
  return kc::hc_post(a_.out, a_.post, a_.comb, T, c.hc_mult, H, a_.streams, stream_);
}

Status V4CudaModel::head(const V4CudaHc& hc_head, const float* norm) {
  const DeepseekV4Config& c = config_;
  const int64_t R = logit_rows_, H = c.hidden_size, hc = c.hc_mult;
  const float eps = static_cast<float>(c.rms_norm_eps);
  DI_RETURN_IF_ERROR(kc::gather_rows(a_.streams, cur_->logit_rows(), R, hc * H, a_.head_streams, stream_));
  DI_ASSIGN_OR_RETURN(const int32_t parts, mix_logits(a_.head_streams, R, hc * H, hc_head.fn, hc));
  DI_RETURN_IF_ERROR(kc::hc_head(a_.mixes, parts, hc_head.base, hc_head.scale, a_.head_streams, R, c.hc_mult, H,
                                 static_cast<float>(c.hc_eps), a_.y, stream_, eps));
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.y, norm, a_.y, R, 1, H, H, eps, DType::kF32, stream_));
  return linear(a_.y, R, H, H, head_, c.vocab_size, logits_dev_.as<float>(), c.vocab_size);
}

Status V4CudaModel::attention(int32_t layer) {
  const DeepseekV4Config& c = config_;
  const V4CudaLayer& w = layers_[layer];
  const AttnType type = attn_type(layer);
  const Rope& rope = type == AttnType::kSliding ? ropes_.main : ropes_.compress;
  const float* inv = (type == AttnType::kSliding ? inv_freq_main_ : inv_freq_compress_).as<const float>();
  const kc::TokenBatch& tb = cur_->device();
  const int64_t T = rows_, H = c.hidden_size, nh = c.num_attention_heads, hd = c.head_dim, W = c.sliding_window,
                qlr = c.q_lora_rank;
  const float eps = static_cast<float>(c.rms_norm_eps);
  DI_RETURN_IF_ERROR(project_x(w, type));
  DI_RETURN_IF_ERROR(norm_staged(a_.qr, w.q_norm, a_.qr16, T, qlr));
  DI_RETURN_IF_ERROR(proj(a_.qr, a_.qr16, T, w.wq_b, a_.q));
  // q: an unweighted norm per head; kv: kv_norm. Each then ropes its trailing channels.
  DI_RETURN_IF_ERROR(kc::rms_norm_rope_pair_at({a_.q, nullptr, nh, nh * hd}, {a_.kv, w.kv_norm, 1, hd}, T, hd, eps,
                                               tb.pos, inv, rope.dim(), rope.scale(), stream_));

  // Compressed entries first: a query may attend to a window that closes at its own token.
  kc::SinkAttentionVarlenArgs args;
  const int32_t tl = layer < c.num_hidden_layers ? layout_.type_layer[layer] : -1;
  int64_t keys = std::min<int64_t>(max_end_, W);
  if (type == AttnType::kHCA) {
    DI_RETURN_IF_ERROR(compress(w.compressor, a_.ckv, layout_.hca_kv, tl, layout_.hca_state, 0));
    args.entry_group = layout_.hca_kv;
    args.compress_rate = c.compress_rate_hca;
    keys += max_end_ / c.compress_rate_hca;
  } else if (type == AttnType::kCSA) {
    DI_RETURN_IF_ERROR(compress(w.compressor, a_.ckv, layout_.csa_kv, tl, layout_.csa_state, 0));
    DI_RETURN_IF_ERROR(compress(w.indexer, a_.ickv, layout_.csa_index_keys, tl, layout_.csa_state, 4 * hd));
    DI_RETURN_IF_ERROR(indexer(w, tl));
    args.entry_group = layout_.csa_kv;
    args.selected = a_.selected;
    args.selected_count = a_.count;
    args.selected_stride = c.index_topk;
    keys += std::min<int64_t>(c.index_topk, max_visible_);
  }
  args.batch = tb;
  args.entry_layer = tl;
  args.q = a_.q;
  args.kv = a_.kv;
  args.sinks = w.sinks;
  args.out = a_.attn;
  args.num_heads = static_cast<int32_t>(nh);
  args.head_dim = static_cast<int32_t>(hd);
  args.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  args.window = static_cast<int32_t>(W);
  args.window_group = layout_.swa_kv;
  args.window_layer = layer;
  args.splits = std::min(splits_, kc::sink_attention_varlen_splits(T, static_cast<int32_t>(nh), keys));
  args.partial = a_.partial;
  // bf16 models take bf16 products (the reference's own precision); fp32 and batch-invariant
  // runs keep the fp32 kernel.
  args.tensor_cores = dtype_ != DType::kF32 && !deterministic_;
  DI_RETURN_IF_ERROR(kc::sink_attention_varlen(args, stream_));
  // K=V carried rope into the output's rope slice: rotate it back by the query's position.
  DI_RETURN_IF_ERROR(
      kc::rope_interleaved_at(a_.attn, T, nh * hd, nh, hd, hd, tb.pos, inv, rope.dim(), rope.scale(), true, stream_));

  // Grouped output projection: each group of heads down to o_lora_rank (one batched GEMM), then
  // one mix to hidden.
  const int64_t groups = c.o_groups, rank = c.o_lora_rank, per_group = nh * hd / groups;
  (void)per_group;
  DI_RETURN_IF_ERROR(project_grouped(w.wo_a, a_.attn, nullptr, T, groups, a_.grouped, groups * rank));
  DI_RETURN_IF_ERROR(project(w.wo_b, a_.grouped, groups * rank, nullptr, T, a_.out, H));
  return kc::write_ring_rows_varlen(tb, a_.kv, hd, hd, layout_.swa_kv, layer, W, 0, stream_);
}

Status V4CudaModel::project_x(const V4CudaLayer& w, AttnType type) {
  const DeepseekV4Config& c = config_;
  const int64_t H = c.hidden_size, qlr = c.q_lora_rank;
  auto dense = [&](const void* p, int64_t n) {
    cuda::DeviceLinear d;
    d.dense = p;
    d.out = n;
    d.in = H;
    return d;
  };
  auto width = [](const V4CudaCompressor& cw) -> int64_t { return cw.overlap ? 2 * cw.dim : cw.dim; };
  std::vector<ProjectOut> outs = {{w.wq_a, a_.qr, qlr}, {w.wkv, a_.kv, c.head_dim}};
  if (type != AttnType::kSliding) {
    const int64_t n = width(w.compressor);  // rows [kv | gate]: the state entry's layout
    outs.push_back({dense(w.compressor.wkv, n), a_.ckv, 2 * n});
    outs.push_back({dense(w.compressor.wgate, n), a_.ckv + n, 2 * n});
  }
  if (type == AttnType::kCSA) {
    const int64_t n = width(w.indexer);
    outs.push_back({dense(w.indexer.wkv, n), a_.ickv, 2 * n});
    outs.push_back({dense(w.indexer.wgate, n), a_.ickv + n, 2 * n});
    outs.push_back({dense(w.index_weights_proj, c.index_n_heads), a_.iw, c.index_n_heads});
  }
  return project_many(outs, a_.x, dtype_ == DType::kF32 ? nullptr : a_.x16, rows_);
}

Status V4CudaModel::compress(const V4CudaCompressor& cw, const float* kv_gate, int32_t entry_group, int32_t tl,
                             int32_t state_group, int64_t state_offset_floats) {
  const int64_t m = cw.rate, d = cw.dim;
  const int64_t width = cw.overlap ? 2 * d : d, ring = cw.overlap ? 2 * m : m;
  const kc::TokenBatch& tb = cur_->device();
  kc::CompressVarlenArgs args;
  args.batch = tb;
  args.kv = kv_gate;
  args.gate = kv_gate + width;
  args.row_stride = 2 * width;
  args.ape = cw.ape;
  args.norm = cw.norm;
  args.eps = static_cast<float>(config_.rms_norm_eps);
  args.dim = cw.dim;
  args.rate = cw.rate;
  args.overlap = cw.overlap;
  args.state_group = state_group;
  args.state_layer = tl;
  args.state_offset = state_offset_floats * 4;
  args.entry_group = entry_group;
  args.entry_layer = tl;
  args.inv_freq = inv_freq_compress_.as<const float>();
  args.rot_dim = ropes_.compress.dim();
  args.rope_scale = ropes_.compress.scale();
  DI_RETURN_IF_ERROR(kc::compress_windows_varlen(args, stream_));
  // The rows later windows still need, after the pooling above has read the old ones: kv and gate
  // side by side, as the state entry keeps them.
  return kc::write_ring_rows_varlen(tb, kv_gate, 2 * width, 2 * width, state_group, tl, ring, state_offset_floats * 4,
                                    stream_);
}

Status V4CudaModel::indexer(const V4CudaLayer& w, int32_t tl) {
  const DeepseekV4Config& c = config_;
  const int64_t T = rows_, nih = c.index_n_heads, ihd = c.index_head_dim;
  const kc::TokenBatch& tb = cur_->device();
  DI_RETURN_IF_ERROR(proj(a_.qr, a_.qr16, T, w.index_wq_b, a_.iq));  // a_.iw: project_x
  const Rope& rope = ropes_.compress;
  DI_RETURN_IF_ERROR(kc::rope_interleaved_at(a_.iq, T, nih * ihd, nih, ihd, ihd, tb.pos,
                                             inv_freq_compress_.as<const float>(), rope.dim(), rope.scale(), false,
                                             stream_));
  kc::IndexerVarlenArgs args;
  args.batch = tb;
  args.q = a_.iq;
  args.weights = a_.iw;
  args.key_group = layout_.csa_index_keys;
  args.key_layer = tl;
  args.heads = static_cast<int32_t>(nih);
  args.head_dim = static_cast<int32_t>(ihd);
  args.rate = c.compress_rate_csa;
  args.topk = c.index_topk;
  args.softmax_scale = 1.0f / std::sqrt(static_cast<float>(ihd));
  args.weight_scale = 1.0f / std::sqrt(static_cast<float>(nih));
  args.scores = a_.scores;
  args.max_visible = max_visible_;
  args.selected = a_.selected;
  args.count = a_.count;
  args.tensor_cores = dtype_ != DType::kF32 && !deterministic_;  // as the attention's products
  return kc::indexer_topk_varlen(args, stream_);
}

Status V4CudaModel::moe(int32_t layer, bool grouped) {
  const DeepseekV4Config& c = config_;
  const V4CudaLayer& w = layers_[layer];
  const int64_t T = rows_, H = c.hidden_size, E = c.n_routed_experts, I = c.moe_intermediate_size;
  const float limit = static_cast<float>(c.swiglu_limit);
  const bool hash = layer < c.num_hidden_layers && c.mlp_layer_types[layer] == MlpType::kHashMoe;
  DI_RETURN_IF_ERROR(proj(a_.x, a_.x16, T, H, w.gate, E, a_.rlogits));
  kc::RoutingArgs r = routing_args(c);
  r.logits = a_.rlogits;
  r.rows = T;
  r.score = c.scoring_func == ScoringFunc::kSqrtSoftplus ? kc::RouterScore::kSqrtSoftplus
            : c.scoring_func == ScoringFunc::kSigmoid    ? kc::RouterScore::kSigmoid
                                                         : kc::RouterScore::kSoftmax;
  r.bias = hash ? nullptr : w.gate_bias;
  r.tid2eid = hash ? w.tid2eid : nullptr;
  r.tokens = cur_->device().ids;
  r.expert_ids = a_.eids;
  r.expert_weights = a_.ew;
  DI_RETURN_IF_ERROR(kc::moe_route(r, stream_));
  // The shared expert writes the output; routed experts add to it, in expert order as on the CPU.
  DI_RETURN_IF_ERROR(proj(a_.x, a_.x16, T, w.shared.w13, a_.gu));
  DI_RETURN_IF_ERROR(kc::clamped_swiglu(a_.gu, T, I, limit, a_.act, stream_));
  DI_RETURN_IF_ERROR(project(w.shared.w2, a_.act, I, nullptr, T, a_.out, H));
  return grouped ? moe_routed_grouped(w) : moe_routed_by_expert(w);
}

Status V4CudaModel::moe_routed_grouped(const V4CudaLayer& w) {
  kc::MoeGroupedArgs g = moe_grouped_args(config_);
  g.w13 = w.w13_table;
  g.w2 = w.w2_table;
  const cuda::DeviceLinear& first = w.experts.front().w13;
  g.fp8 = first.is_fp8();
  g.w13_scale = w.w13_scale_table;
  g.w2_scale = w.w2_scale_table;
  g.fp8_block_rows = first.fp8.block_rows;
  g.fp8_w2_block_rows = w.experts.front().w2.fp8.block_rows;
  g.swiglu_limit = static_cast<float>(config_.swiglu_limit);
  return run_grouped_experts(
      g, a_.x, rows_, {a_.eids, a_.ew, a_.offsets, a_.slot_pair, a_.pair_act, a_.pair_y, bad_id_.device()}, a_.out);
}

Status V4CudaModel::moe_routed_by_expert(const V4CudaLayer& w) {
  const DeepseekV4Config& c = config_;
  const int64_t L = rows_, H = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok,
                I = c.moe_intermediate_size;
  const float limit = static_cast<float>(c.swiglu_limit);
  // Which rows each expert takes: the routing comes back to the host (one sync per MoE layer).
  DI_ASSIGN_OR_RETURN(const std::vector<int64_t> count,
                      expert_rows_.group(a_.eids, a_.ew, L, K, E, a_.erows, a_.erow_weights, stream_, "deepseek_v4"));
  // bf16 models gather every pair's row once, as the GEMM operand, and take the activation as bf16.
  const bool bf16 = dtype_ != DType::kF32;
  auto* gx16 = reinterpret_cast<uint16_t*>(a_.gx16);
  if (bf16) DI_RETURN_IF_ERROR(kc::gather_rows_bf16(a_.x, a_.erows, count[E], H, gx16, stream_));
  if (bf16 && !w.experts.front().w13.is_fp8()) {
    ExpertRuns runs{.count = &count, .x16 = gx16, .rows = a_.erows, .weights = a_.erow_weights, .hidden = H,
                    .inter = I, .max_rows = L, .limit = limit, .gate_up = a_.gu,
                    .act16 = reinterpret_cast<uint16_t*>(a_.act16), .y = a_.y, .out = a_.out};
    for (const V4CudaExpert& ex : w.experts) {
      runs.w13.push_back(ex.w13.dense);
      runs.w2.push_back(ex.w2.dense);
    }
    return experts_in_runs(runs);
  }
  for (int64_t e = 0; e < E; ++e) {
    const V4CudaExpert& ex = w.experts[e];
    // A hash table may route a token to one expert twice: pieces of at most L rows each.
    for (int64_t off = count[e]; off < count[e + 1]; off += L) {
      const int64_t n = std::min(L, count[e + 1] - off);
      if (bf16) {
        DI_RETURN_IF_ERROR(project(ex.w13, nullptr, H, gx16 + off * H, n, a_.gu, 2 * I));
        DI_RETURN_IF_ERROR(kc::clamped_swiglu_bf16(a_.gu, n, I, limit, a_.act16, stream_));
        DI_RETURN_IF_ERROR(project(ex.w2, nullptr, I, a_.act16, n, a_.y, H));
      } else {
        DI_RETURN_IF_ERROR(kc::gather_rows(a_.x, a_.erows + off, n, H, a_.gx, stream_));
        DI_RETURN_IF_ERROR(project(ex.w13, a_.gx, H, nullptr, n, a_.gu, 2 * I));
        DI_RETURN_IF_ERROR(kc::clamped_swiglu(a_.gu, n, I, limit, a_.act, stream_));
        DI_RETURN_IF_ERROR(project(ex.w2, a_.act, I, nullptr, n, a_.y, H));
      }
      DI_RETURN_IF_ERROR(kc::scatter_add_rows(a_.y, a_.erows + off, a_.erow_weights + off, n, H, a_.out, stream_));
    }
  }
  return Status::ok();
}

}  // namespace di::engine::deepseek_v4

#endif  // DI_WITH_CUDA
