// MlaCudaModel: weight upload and the layer loop on the GPU. See mla_cuda_model.h. Each step
// mirrors the CPU model (mla_attention.cpp's absorbed path, moe.cpp) in the same order, so fp32
// results agree to rounding; every kernel runs once for all rows of the step (kernels/cuda/
// mla_attention, moe_grouped), heads batched into one GEMM or one launch.
#ifdef DI_WITH_CUDA

#include "engine/model/deepseek_v2/mla_cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/model/batch_check.h"
#include "engine/model/cuda/graph_buckets.h"
#include "engine/model/cuda/workspace.h"
#include "kernels/cuda/cache_rows.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/mla_attention.h"
#include "kernels/cuda/mla_norm.h"
#include "kernels/cuda/mla_query.h"
#include "kernels/cuda/mla_rope.h"
#include "kernels/cuda/moe_experts.h"
#include "kernels/cuda/moe_grouped.h"
#include "kernels/cuda/moe_routing.h"
#include "kernels/cuda/rope_interleaved.h"

namespace di::engine::deepseek_v2 {
namespace kc = di::kernels::cuda;
using kc::DType;

namespace {

constexpr int64_t kActivationReserve = int64_t{2} << 30;  // workspaces besides the caches
constexpr float kLatentNormEps = 1e-6f;  // transformers' q_a / kv_a layernorms ignore rms_norm_eps
constexpr int64_t kGroupedPairsMax = 4096;  // (row, expert) pairs up to which experts are grouped on the device
// The latent cache is one entry per position: as a "ring" this long, entry p is position p.
constexpr int64_t kNoWrap = int64_t{1} << 40;

}  // namespace

MlaCudaModel::MlaCudaModel(MlaConfig config, DType dtype, const ModelOptions& options, std::string model_dir)
    : DeviceModel(dtype, options, kActivationReserve),
      config_(std::move(config)),
      rope_(config_.rope, config_.rope_interleave ? RopeLayout::kInterleaved : RopeLayout::kHalf),
      weights_(dtype) {
  const MlaConfig& c = config_;
  set_info(c.model_type, std::move(model_dir), c);
  enforce_eager_ = options.enforce_eager;
  // The CPU model's one group: kv_a_layernorm(c_kv) | rope(k_pe) per token per layer; in bf16 for
  // the bf16 models (half the bytes decode reads per key, as transformers keeps it), fp32 for the
  // fp32 fixtures.
  latent_bf16_ = dtype != DType::kF32 && kc::mla_bf16_cache_fits(c.kv_lora_rank, c.qk_rope_head_dim);
  groups_.push_back({"mla_latent", CacheKind::kFull, c.num_hidden_layers,
                     (int64_t{c.kv_lora_rank} + c.qk_rope_head_dim) * (latent_bf16_ ? 2 : 4), 0, 1, 0});
}

// graphs_, a member, goes before the base class destroys the stream it captured on.
MlaCudaModel::~MlaCudaModel() = default;

Status MlaCudaModel::check_shape(const MlaConfig& c) {
  DI_RETURN_IF_ERROR(check_at_most("num_experts_per_tok", c.num_experts_per_tok, kc::kMaxRoutedPerToken));
  DI_RETURN_IF_ERROR(check_at_most("n_group", c.n_group, kc::kMaxExpertGroups));
  DI_RETURN_IF_ERROR(check_at_most("n_routed_experts", c.n_routed_experts, kc::kMaxGroupedExperts));
  if (c.kv_lora_rank % 4 || c.kv_lora_rank > 512 || c.qk_rope_head_dim % 4)
    return Status::unsupported("device 'cuda': kv_lora_rank " + std::to_string(c.kv_lora_rank) +
                               " must be a multiple of 4 up to 512 and qk_rope_head_dim " +
                               std::to_string(c.qk_rope_head_dim) + " a multiple of 4");
  return Status::ok();
}

Status MlaCudaModel::init_device() {
  DI_RETURN_IF_ERROR(open_stream());
  DI_RETURN_IF_ERROR(bad_id_.init());
  return upload_f32(rope_.inv_freq(), inv_freq_);
}

Status MlaCudaModel::put_linear(std::initializer_list<const kernels::LinearWeight*> parts, const std::string& name,
                                cuda::DeviceLinear& d) {
  DI_ASSIGN_OR_RETURN(d, cuda::upload_linear(weights_, std::span(parts.begin(), parts.size()), name, stream_));
  if (d.is_fp8()) largest_fp8_ = std::max(largest_fp8_, d.out * d.in);
  return Status::ok();
}

Status MlaCudaModel::put_mlp(const MlpWeights& h, MlaCudaMlp& d, const std::string& name) {
  const int64_t I = h.intermediate, H = config_.hidden_size;
  d.inter = I;
  if (I == 0) return Status::ok();
  DI_RETURN_IF_ERROR(put_linear({&h.gate, &h.up}, name + ".gate_proj|up_proj", d.gate_up));
  DI_RETURN_IF_ERROR(put_linear({&h.down}, name + ".down_proj", d.down));
  if (h.gate_bias || h.up_bias) {
    std::vector<float> b(static_cast<size_t>(2 * I), 0.f);
    if (h.gate_bias) std::memcpy(b.data(), h.gate_bias, static_cast<size_t>(I) * 4);
    if (h.up_bias) std::memcpy(b.data() + I, h.up_bias, static_cast<size_t>(I) * 4);
    DI_ASSIGN_OR_RETURN(d.gate_up_bias, weights_.put_f32(b.data(), 2 * I));
  }
  DI_ASSIGN_OR_RETURN(d.down_bias, weights_.put_f32(h.down_bias, H));
  return Status::ok();
}

Status MlaCudaModel::upload(const MlaWeights& w) {
  const MlaConfig& c = config_;
  const int64_t H = c.hidden_size, V = c.vocab_size, nh = c.num_attention_heads;
  const int64_t nope = c.qk_nope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank;
  const int64_t E = c.n_routed_experts;
  // The embedding table stays fp32 (rows are gathered into fp32 activations); the head takes the
  // model dtype.
  DI_ASSIGN_OR_RETURN(const float* embed, weights_.put_f32(w.embed, V * H));
  embed_ = embed;
  DI_ASSIGN_OR_RETURN(head_, weights_.put(w.lm_head, V * H));
  DI_ASSIGN_OR_RETURN(norm_, weights_.put_f32(w.norm, H));
  layers_.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const MlaLayerWeights& h = w.layers[l];
    const MlaAttentionWeights& a = h.attn;
    MlaCudaLayer& d = layers_[l];
    const std::string at = "model.layers." + std::to_string(l) + ".self_attn.", mlp = "model.layers." + std::to_string(l) + ".mlp";
    DI_ASSIGN_OR_RETURN(d.input_norm, weights_.put_f32(h.input_layernorm, H));
    DI_ASSIGN_OR_RETURN(d.post_norm, weights_.put_f32(h.post_attention_layernorm, H));
    if (c.q_lora_rank > 0) {
      const int64_t r = c.q_lora_rank;
      DI_RETURN_IF_ERROR(put_linear({&a.q_a_proj}, at + "q_a_proj", d.q_a_proj));
      DI_ASSIGN_OR_RETURN(d.q_a_bias, weights_.put_f32(a.q_a_bias, r));
      DI_ASSIGN_OR_RETURN(d.q_a_norm, weights_.put_f32(a.q_a_layernorm, r));
      DI_RETURN_IF_ERROR(put_linear({&a.q_b_proj}, at + "q_b_proj", d.q_b_proj));
    } else {
      DI_RETURN_IF_ERROR(put_linear({&a.q_proj}, at + "q_proj", d.q_proj));
    }
    DI_RETURN_IF_ERROR(put_linear({&a.kv_a_proj}, at + "kv_a_proj_with_mqa", d.kv_a_proj));
    DI_ASSIGN_OR_RETURN(d.kv_a_bias, weights_.put_f32(a.kv_a_bias, kvl + c.qk_rope_head_dim));
    DI_ASSIGN_OR_RETURN(d.kv_a_norm, weights_.put_f32(a.kv_a_layernorm, kvl));
    DI_ASSIGN_OR_RETURN(d.kv_b_proj, weights_.put(a.kv_b_proj, nh * (nope + v) * kvl));
    DI_ASSIGN_OR_RETURN(d.w_uk_t, weights_.put(a.w_uk_t, nh * kvl * nope));
    DI_RETURN_IF_ERROR(put_linear({&a.o_proj}, at + "o_proj", d.o_proj));
    DI_ASSIGN_OR_RETURN(d.o_bias, weights_.put_f32(a.o_bias, H));
    d.is_moe = h.is_moe;
    if (!h.is_moe) {
      DI_RETURN_IF_ERROR(put_mlp(h.mlp, d.mlp, mlp));
      continue;
    }
    DI_ASSIGN_OR_RETURN(d.router, weights_.put(h.moe.gate, E * H));
    DI_ASSIGN_OR_RETURN(d.correction_bias, weights_.put_f32(h.moe.e_score_correction_bias, E));
    d.experts.resize(E);
    for (int64_t e = 0; e < E; ++e)
      DI_RETURN_IF_ERROR(put_mlp(h.moe.experts[e], d.experts[e], mlp + ".experts." + std::to_string(e)));
    DI_RETURN_IF_ERROR(put_mlp(h.moe.shared, d.shared, mlp + ".shared_experts"));
  }
  return reserve_dequant_stage(largest_fp8_);
}

Result<std::unique_ptr<Model>> MlaCudaModel::load(const std::string& model_dir, MlaConfig config,
                                                  std::unique_ptr<MlaWeights> host, const ModelOptions& options) {
  DI_RETURN_IF_ERROR(check_shape(config));
  DType dtype = DType::kBF16;
  if (const TensorView* t = host->store.checkpoint->find("model.embed_tokens.weight"))
    dtype = t->dtype == engine::DType::kF32 ? DType::kF32 : DType::kBF16;
  const int32_t num_layers = config.num_hidden_layers;
  std::unique_ptr<MlaCudaModel> m(new MlaCudaModel(std::move(config), dtype, options, model_dir));
  // The device path runs no MTP layers, so they take no device memory.
  DI_RETURN_IF_ERROR(m->check_memory(*host->store.checkpoint, num_layers, false));
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->upload(*host));
  DI_RETURN_IF_ERROR(m->build_expert_tables());
  return std::unique_ptr<Model>(std::move(m));
}

Status MlaCudaModel::randomize(uint64_t seed, bool fp8_weights) {
  const MlaConfig& c = config_;
  const int64_t H = c.hidden_size, V = c.vocab_size, nh = c.num_attention_heads, qk = c.qk_head_dim();
  const int64_t nope = c.qk_nope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank, rd = c.qk_rope_head_dim;
  const int64_t E = c.n_routed_experts;
  uint64_t next = seed;
  // A matrix [n, k] scaled so that its products keep the activations' size.
  auto mat = [&](int64_t n, int64_t k) -> Result<const void*> {
    DI_ASSIGN_OR_RETURN(void* p, weights_.put_random(n * k, 0.f, 1.f / std::sqrt(static_cast<float>(k)), ++next,
                                                     false, stream_));
    return static_cast<const void*>(p);
  };
  // fp8: DeepSeek-V3's layout, 128 x 128 scale blocks for every projection and expert; kv_b_proj
  // (dequantized at load), the router, embedding and head stay bf16, as a shipped checkpoint loads.
  auto lin = [&](int64_t n, int64_t k) -> Result<cuda::DeviceLinear> {
    if (fp8_weights) largest_fp8_ = std::max(largest_fp8_, n * k);
    return cuda::random_linear(weights_, n, k, fp8_weights, 128, ++next, stream_);
  };
  auto vec = [&](int64_t n, float offset, float scale) -> Result<const float*> {
    DI_ASSIGN_OR_RETURN(void* p, weights_.put_random(n, offset, scale, ++next, true, stream_));
    return static_cast<const float*>(p);
  };
  auto mlp_w = [&](int64_t I, MlaCudaMlp& d) -> Status {
    d.inter = I;
    DI_ASSIGN_OR_RETURN(d.gate_up, lin(2 * I, H));
    DI_ASSIGN_OR_RETURN(d.down, lin(H, I));
    return Status::ok();
  };
  DI_ASSIGN_OR_RETURN(embed_, vec(V * H, 0.f, 1.f));
  DI_ASSIGN_OR_RETURN(head_, mat(V, H));
  DI_ASSIGN_OR_RETURN(norm_, vec(H, 1.f, 0.f));
  layers_.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    MlaCudaLayer& d = layers_[l];
    DI_ASSIGN_OR_RETURN(d.input_norm, vec(H, 1.f, 0.f));
    DI_ASSIGN_OR_RETURN(d.post_norm, vec(H, 1.f, 0.f));
    if (c.q_lora_rank > 0) {
      DI_ASSIGN_OR_RETURN(d.q_a_proj, lin(c.q_lora_rank, H));
      DI_ASSIGN_OR_RETURN(d.q_a_norm, vec(c.q_lora_rank, 1.f, 0.f));
      DI_ASSIGN_OR_RETURN(d.q_b_proj, lin(nh * qk, c.q_lora_rank));
    } else {
      DI_ASSIGN_OR_RETURN(d.q_proj, lin(nh * qk, H));
    }
    DI_ASSIGN_OR_RETURN(d.kv_a_proj, lin(kvl + rd, H));
    DI_ASSIGN_OR_RETURN(d.kv_a_norm, vec(kvl, 1.f, 0.f));
    DI_ASSIGN_OR_RETURN(d.kv_b_proj, mat(nh * (nope + v), kvl));
    DI_ASSIGN_OR_RETURN(d.w_uk_t, mat(nh * kvl, nope));
    DI_ASSIGN_OR_RETURN(d.o_proj, lin(H, nh * v));
    d.is_moe = c.is_moe_layer(l);
    if (!d.is_moe) {
      DI_RETURN_IF_ERROR(mlp_w(c.intermediate_size, d.mlp));
      continue;
    }
    DI_ASSIGN_OR_RETURN(d.router, mat(E, H));
    if (c.routing == Routing::kSigmoidNoAux) {
      DI_ASSIGN_OR_RETURN(d.correction_bias, vec(E, 0.f, 0.01f));
    }
    d.experts.resize(E);
    for (int64_t e = 0; e < E; ++e) DI_RETURN_IF_ERROR(mlp_w(c.moe_intermediate_size, d.experts[e]));
    if (c.n_shared_experts > 0)
      DI_RETURN_IF_ERROR(mlp_w(int64_t{c.moe_intermediate_size} * c.n_shared_experts, d.shared));
  }
  DI_RETURN_IF_ERROR(reserve_dequant_stage(largest_fp8_));
  return kc::stream_synchronize(stream_);
}

Result<std::unique_ptr<MlaCudaModel>> MlaCudaModel::random(MlaConfig config, DType dtype, uint64_t seed,
                                                           const ModelOptions& options, bool fp8_weights) {
  DI_RETURN_IF_ERROR(check_shape(config));
  std::unique_ptr<MlaCudaModel> m(new MlaCudaModel(std::move(config), dtype, options, "<random>"));
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->randomize(seed, fp8_weights));
  DI_RETURN_IF_ERROR(m->build_expert_tables());
  return m;
}

// Per layer four device arrays of E pointers: gate_up codes or values, down's, then (fp8) their
// scales. One format for all experts: the grouped kernels take one.
Status MlaCudaModel::build_expert_tables() {
  const int64_t L = config_.num_hidden_layers, E = config_.n_routed_experts;
  experts_biased_ = false;
  experts_fp8_ = false;
  if (E == 0) return Status::ok();
  std::vector<const void*> table(static_cast<size_t>(4 * L * E), nullptr);
  auto data = [](const cuda::DeviceLinear& d) -> const void* { return d.is_fp8() ? d.fp8.data : d.dense; };
  bool first = true;
  for (int64_t l = 0; l < L; ++l) {
    if (!layers_[l].is_moe) continue;
    for (int64_t e = 0; e < E; ++e) {
      const MlaCudaMlp& x = layers_[l].experts[e];
      const bool fp8 = x.gate_up.is_fp8();
      if (fp8 != x.down.is_fp8() || (!first && fp8 != experts_fp8_))
        return Status::unsupported("device 'cuda': layer " + std::to_string(l) + " expert " + std::to_string(e) +
                                   " mixes fp8 and dense weights with the other experts; the grouped expert kernels "
                                   "take one format");
      experts_fp8_ = fp8;
      first = false;
      experts_biased_ |= x.gate_up_bias || x.down_bias;
      table[(4 * l) * E + e] = data(x.gate_up);
      table[(4 * l + 1) * E + e] = data(x.down);
      table[(4 * l + 2) * E + e] = x.gate_up.fp8.scale;
      table[(4 * l + 3) * E + e] = x.down.fp8.scale;
    }
  }
  if (experts_fp8_ && experts_biased_)
    return Status::unsupported("device 'cuda': fp8 routed experts with biases have no CUDA path");
  if (experts_fp8_ && (config_.hidden_size % 16 || config_.moe_intermediate_size % 16))
    return Status::unsupported("device 'cuda': fp8 routed experts need hidden_size and moe_intermediate_size "
                               "multiples of 16 (got " + std::to_string(config_.hidden_size) + " and " +
                               std::to_string(config_.moe_intermediate_size) + ")");
  DI_ASSIGN_OR_RETURN(const void* const* base, upload_table(table, expert_tables_));
  for (int64_t l = 0; l < L; ++l) {
    layers_[l].gate_up_table = base + (4 * l) * E;
    layers_[l].down_table = base + (4 * l + 1) * E;
    layers_[l].gate_up_scale_table = reinterpret_cast<const float* const*>(base + (4 * l + 2) * E);
    layers_[l].down_scale_table = reinterpret_cast<const float* const*>(base + (4 * l + 3) * E);
  }
  return Status::ok();
}

Status MlaCudaModel::reserve(int64_t T, int64_t max_end, int64_t R, bool* moved) {
  const MlaConfig& c = config_;
  const int64_t H = c.hidden_size, nh = c.num_attention_heads, qk = c.qk_head_dim(), kvl = c.kv_lora_rank,
                entry = kvl + c.qk_rope_head_dim, v = c.v_head_dim, E = std::max(1, c.n_routed_experts),
                K = std::max(1, c.num_experts_per_tok), qlr = std::max(1, c.q_lora_rank),
                Im = std::max(1, c.moe_intermediate_size);
  const int64_t I = std::max({int64_t{c.intermediate_size}, int64_t{c.moe_intermediate_size},
                              int64_t{c.moe_intermediate_size} * c.n_shared_experts});
  rows_ = T;
  max_end_ = max_end;
  logit_rows_ = R;
  // Batch-invariant mode: one MoE path for every step (grouped pairs sum each pair over K in one
  // order whatever an expert's count), and one pass over each row's keys (no split by the step).
  const bool group_all = deterministic_ && !experts_biased_;
  grouped_pairs_ = !experts_biased_ && (group_all || T * K <= kGroupedPairsMax) ? T * K : 0;
  splits_ = deterministic_ ? 1 : kc::mla_attention_splits(T, static_cast<int32_t>(nh), max_end, dtype_ != DType::kF32,
                                                               latent_bf16_);
  const int64_t max_k = std::max({H, qlr, nh * qk, nh * v, nh * kvl, I});
  const int64_t gp = std::max<int64_t>(1, grouped_pairs_);
  const int64_t partial = std::max<int64_t>(
      1, kc::mla_attention_partial_floats(T, static_cast<int32_t>(nh), static_cast<int32_t>(kvl), splits_));
  // The bf16 experts one run at a time: every pair's row as bf16, and a run's activation.
  const bool runs16 = grouped_pairs_ == 0 && dtype_ != DType::kF32 && !experts_biased_;
  std::vector<int64_t> floats = {T * H,     T * H,     T * H,     T * qlr,  T * nh * qk, T * entry, T * nh * entry,
                                 T * nh * kvl, T * nh * v, partial, T * E, T * K,      T * H,     T * 2 * I,
                                 T * I,     T * H,     T * K,     gp * Im,  gp * H,      R * H,     (T * H + 1) / 2,
                                 (T * qlr + 1) / 2, runs16 ? (T * K * H + 1) / 2 : 1, runs16 ? (T * Im + 1) / 2 : 1,
                                 (T * I + 1) / 2, (T * nh * v + 1) / 2};
  std::vector<int64_t> ints = {T * K, T * K, 2 * E + 2, gp};
  const void* before = act_.get();
  const int64_t stage_rows = std::max(T, R), bf16_stage = (stage_rows * max_k * 2 + 255) / 256 * 256;
  DI_ASSIGN_OR_RETURN(cuda::Workspace w,
                      cuda::Workspace::carve(act_, std::move(floats), std::move(ints),
                                             bf16_stage + (largest_fp8_ > 0 ? fp8_stage_bytes(stage_rows, max_k) : 0)));
  Act& a = a_;
  a.x = w.f32(), a.h = w.f32(), a.out = w.f32(), a.qa = w.f32(), a.q = w.f32(), a.ckv = w.f32(), a.qlat = w.f32();
  a.olat = w.f32(), a.attn = w.f32(), a.partial = w.f32(), a.rlogits = w.f32(), a.ew = w.f32(), a.gx = w.f32();
  a.gu = w.f32(), a.act = w.f32(), a.y = w.f32(), a.erow_weights = w.f32(), a.pair_act = w.f32(),
  a.pair_y = w.f32();
  a.head_x = w.f32(), a.h16 = w.f32(), a.qa16 = w.f32(), a.gx16 = w.f32(), a.act16 = w.f32();
  a.mlp16 = w.f32(), a.attn16 = w.f32();
  a.eids = w.i32(), a.erows = w.i32(), a.offsets = w.i32(), a.slot_pair = w.i32();
  linear_stage_ = w.rest();
  fp8_stage_ = static_cast<uint8_t*>(linear_stage_) + bf16_stage;
  const void* logits_before = logits_dev_.get();
  DI_RETURN_IF_ERROR(cuda::grow_buffer(logits_dev_, R * c.vocab_size * 4));
  *moved = act_.get() != before || logits_dev_.get() != logits_before;
  return Status::ok();
}

Result<float*> MlaCudaModel::enqueue_forward(const ForwardBatch& batch, int64_t* rows) {
  const MlaConfig& c = config_;
  DI_ASSIGN_OR_RETURN(const int64_t out_rows, check_batch(batch, info_.vocab_size, c.max_position_embeddings));
  *rows = out_rows;
  bad_id_.clear_host();
  if (out_rows == 0) return static_cast<float*>(nullptr);
  const int64_t S = static_cast<int64_t>(batch.seqs.size());
  bool decode = S > 0;
  for (const SequenceInput& s : batch.seqs) decode &= s.num_tokens == 1;
  const int32_t bucket = decode && !enforce_eager_ && !experts_biased_ ? cuda::graph_bucket(S) : -1;
  const bool graph = bucket > 0 && int64_t{bucket} * std::max(1, c.num_experts_per_tok) <= kGroupedPairsMax;
  DI_RETURN_IF_ERROR(step_.pack(batch, groups_, graph ? bucket : 0, graph ? bucket : 0));
  DI_RETURN_IF_ERROR(stage_step(
      step_, graph, graph ? step_.device().num_tokens : out_rows,
      [&](int64_t T, int64_t ctx, int64_t R, bool* moved) { return reserve(T, ctx, R, moved); }, graphs_));
  if (graph) {
    DI_RETURN_IF_ERROR(graphs_.launch({rows_, max_end_}, stream_, [&] { return run_step(true); }));
  } else {
    DI_RETURN_IF_ERROR(run_step(grouped_pairs_ > 0));
  }
  DI_RETURN_IF_ERROR(bad_id_.copy_to_host(stream_));
  return logits_dev_.as<float>();
}

Status MlaCudaModel::check_forward() { return bad_id_.check(config_.model_type); }

Status MlaCudaModel::run_step(bool grouped_moe) {
  const MlaConfig& c = config_;
  const int64_t T = rows_, H = c.hidden_size;
  const float eps = static_cast<float>(c.rms_norm_eps);
  // The residual add fused with the next norm; with bf16 weights the norm also writes h16.
  auto add_norm = [&](const float* weight, bool staged) -> Status {
    if (dtype_ == DType::kF32 || !staged)
      return kc::add_rms_norm(a_.x, a_.out, weight, a_.h, T, H, eps, DType::kF32, stream_);
    return kc::add_rms_norm_with_bf16(a_.x, a_.out, weight, a_.h, a_.h16, T, H, eps, stream_);
  };
  DI_RETURN_IF_ERROR(kc::embedding(step_.device().ids, T, embed_, H, a_.x, DType::kF32, stream_));  // fp32 table
  if (dtype_ == DType::kF32) {
    DI_RETURN_IF_ERROR(kc::rms_norm(a_.x, layers_[0].input_norm, a_.h, T, 1, H, H, eps, DType::kF32, stream_));
  } else {
    DI_RETURN_IF_ERROR(kc::rms_norm_with_bf16(a_.x, layers_[0].input_norm, a_.h, a_.h16, T, H, eps, stream_));
  }
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const MlaCudaLayer& w = layers_[l];
    DI_RETURN_IF_ERROR(attention(l));
    DI_RETURN_IF_ERROR(add_norm(w.post_norm, true));
    if (w.is_moe) {
      DI_RETURN_IF_ERROR(moe(l, grouped_moe));
    } else {
      DI_RETURN_IF_ERROR(mlp(w.mlp, a_.h, a_.h16, T, a_.out));
    }
    // The next layer's input norm, or the final one (whose rows the head stages itself).
    const bool last = l + 1 == c.num_hidden_layers;
    DI_RETURN_IF_ERROR(add_norm(last ? norm_ : layers_[l + 1].input_norm, !last));
  }
  DI_RETURN_IF_ERROR(kc::gather_rows(a_.h, step_.logit_rows(), logit_rows_, H, a_.head_x, stream_));
  return linear(a_.head_x, logit_rows_, H, H, head_, c.vocab_size, logits_dev_.as<float>(), c.vocab_size);
}

Status MlaCudaModel::rope(float* x, int64_t row_stride, int64_t count, int64_t width) {
  const int32_t* pos = step_.device().pos;
  if (config_.rope_interleave)
    return kc::rope_interleaved_at(x, rows_, row_stride, count, width, width, pos, inv_freq_.as<const float>(),
                                   rope_.dim(), rope_.attention_scaling(), false, stream_);
  return kc::rope_half_at(x, rows_, row_stride, count, width, pos, inv_freq_.as<const float>(), rope_.dim(),
                          rope_.attention_scaling(), stream_);
}

Status MlaCudaModel::attention(int32_t layer) {
  const MlaConfig& c = config_;
  const MlaCudaLayer& w = layers_[layer];
  const kc::TokenBatch& tb = step_.device();
  const int64_t T = rows_, H = c.hidden_size, nh = c.num_attention_heads;
  const int64_t nope = c.qk_nope_head_dim, rd = c.qk_rope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank;
  const int64_t qk = nope + rd, entry = kvl + rd;
  {  // the queries' first projection and the latent entry's both read h: one launch at decode
    const bool lora = c.q_lora_rank > 0;
    const ProjectOut outs[] = {{lora ? w.q_a_proj : w.q_proj, lora ? a_.qa : a_.q}, {w.kv_a_proj, a_.ckv}};
    DI_RETURN_IF_ERROR(project_many(outs, a_.h, a_.h16, T));
  }
  if (c.q_lora_rank > 0) {
    const int64_t r = c.q_lora_rank;
    if (w.q_a_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.qa, w.q_a_bias, T, r, r, DType::kF32, stream_));
    if (dtype_ == DType::kF32) {
      DI_RETURN_IF_ERROR(kc::rms_norm(a_.qa, w.q_a_norm, a_.qa, T, 1, r, r, kLatentNormEps, DType::kF32, stream_));
    } else {
      DI_RETURN_IF_ERROR(kc::rms_norm_with_bf16(a_.qa, w.q_a_norm, a_.qa, a_.qa16, T, r, kLatentNormEps, stream_));
    }
    DI_RETURN_IF_ERROR(project(w.q_b_proj, a_.qa, r, a_.qa16, T, a_.q, nh * qk));
  }
  if (w.kv_a_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.ckv, w.kv_a_bias, T, entry, entry, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(rope(a_.q, nh * qk, nh, qk));
  if (config_.rope_interleave) {  // kv_a_layernorm over the latent and rope over k_pe in one launch
    DI_RETURN_IF_ERROR(kc::rms_norm_rope_at(a_.ckv, w.kv_a_norm, T, 1, entry, entry, kLatentNormEps, tb.pos,
                                            inv_freq_.as<const float>(), rope_.dim(), rope_.attention_scaling(),
                                            stream_, kvl));
  } else {
    DI_RETURN_IF_ERROR(
        kc::rms_norm(a_.ckv, w.kv_a_norm, a_.ckv, T, 1, kvl, entry, kLatentNormEps, DType::kF32, stream_));
    DI_RETURN_IF_ERROR(rope(a_.ckv, entry, 1, entry));
  }
  // Every row's entry goes to its position of the latent cache before any row attends to it.
  DI_RETURN_IF_ERROR(kc::write_ring_rows_varlen(tb, a_.ckv, entry, entry, 0, layer, kNoWrap, 0, stream_,
                                                latent_bf16_ ? DType::kBF16 : DType::kF32));

  // Absorbed queries: each head's q_nope through its key up-projection into latent space (one
  // batched GEMM over the heads), rope as is (staged with the GEMM's bf16 operand).
  const int64_t wb = kc::dtype_bytes(dtype_);
  const bool stage16 = dtype_ != DType::kF32;
  DI_RETURN_IF_ERROR(
      kc::mla_stage_query(a_.q, T, nh, nope, rd, kvl, stage16 ? linear_stage_ : nullptr, a_.qlat, stream_));
  const void* qn = stage16 ? linear_stage_ : static_cast<const void*>(a_.q);
  DI_RETURN_IF_ERROR(gemm_.linear_batched(qn, T, nope, nh * qk, qk, w.w_uk_t, kvl, kvl * nope, dtype_, a_.qlat,
                                          nh * entry, entry, DType::kF32, nh));
  // MQA with one K=V head of latent | rope over every position so far, all heads in one launch.
  kc::MlaAttentionArgs args;
  args.batch = tb;
  args.q = a_.qlat;
  args.out = a_.olat;
  args.num_heads = static_cast<int32_t>(nh);
  args.latent_dim = static_cast<int32_t>(kvl);
  args.rope_dim = static_cast<int32_t>(rd);
  args.scale = static_cast<float>(c.softmax_scale);
  args.cache_group = 0;
  args.cache_layer = layer;
  args.splits = splits_;
  args.keys_per_split = kc::mla_attention_keys_per_split(max_end_, splits_);
  args.partial = a_.partial;
  args.tensor_cores = dtype_ != DType::kF32 && kvl % 8 == 0 && rd % 8 == 0;
  args.bf16_cache = latent_bf16_;
  DI_RETURN_IF_ERROR(kc::mla_attention(args, stream_));
  // The output's latent part through each head's value up-projection (one batched GEMM).
  const void* ol = a_.olat;
  if (dtype_ != DType::kF32) {
    DI_RETURN_IF_ERROR(kc::convert_from_f32(a_.olat, T * nh * kvl, linear_stage_, dtype_, stream_));
    ol = linear_stage_;
  }
  const void* w_uv = static_cast<const uint8_t*>(w.kv_b_proj) + nope * kvl * wb;
  // bf16 models take the heads' outputs as bf16 straight from the GEMM: the o_proj operand, with
  // the bits a rounding of its fp32 sums would give.
  const bool out16 = dtype_ != DType::kF32;
  DI_RETURN_IF_ERROR(gemm_.linear_batched(ol, T, kvl, nh * kvl, kvl, w_uv, v, (nope + v) * kvl, dtype_,
                                          out16 ? static_cast<void*>(a_.attn16) : a_.attn, nh * v, v,
                                          out16 ? DType::kBF16 : DType::kF32, nh));
  DI_RETURN_IF_ERROR(project(w.o_proj, a_.attn, nh * v, out16 ? a_.attn16 : nullptr, T, a_.out, H));
  if (w.o_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.out, w.o_bias, T, H, H, DType::kF32, stream_));
  return Status::ok();
}

Status MlaCudaModel::mlp(const MlaCudaMlp& m, const float* x, const void* x16, int64_t rows, float* y) {
  DI_RETURN_IF_ERROR(project(m.gate_up, x, config_.hidden_size, x16, rows, a_.gu, 2 * m.inter));
  return mlp_down(m, rows, y);
}

Status MlaCudaModel::mlp_down(const MlaCudaMlp& m, int64_t rows, float* y) {
  const int64_t H = config_.hidden_size, I = m.inter;
  if (m.gate_up_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.gu, m.gate_up_bias, rows, 2 * I, 2 * I, DType::kF32, stream_));
  if (dtype_ == DType::kF32) {
    DI_RETURN_IF_ERROR(kc::silu_and_mul(a_.gu, rows, I, a_.act, DType::kF32, stream_));
    DI_RETURN_IF_ERROR(project(m.down, a_.act, I, nullptr, rows, y, H));
  } else {  // the activation as bf16, the down operand (the same ops and rounding as staging it)
    const float no_clip = std::numeric_limits<float>::infinity();
    DI_RETURN_IF_ERROR(kc::clamped_swiglu_bf16(a_.gu, rows, I, no_clip, a_.mlp16, stream_));
    DI_RETURN_IF_ERROR(project(m.down, nullptr, I, a_.mlp16, rows, y, H));
  }
  if (m.down_bias) DI_RETURN_IF_ERROR(kc::add_bias(y, m.down_bias, rows, H, H, DType::kF32, stream_));
  return Status::ok();
}

Status MlaCudaModel::moe(int32_t layer, bool grouped) {
  const MlaConfig& c = config_;
  const MlaCudaLayer& w = layers_[layer];
  const int64_t T = rows_, H = c.hidden_size, E = c.n_routed_experts;
  cuda::DeviceLinear router;
  router.dense = w.router;
  router.out = E;
  router.in = H;
  if (w.shared.inter > 0) {  // the router and the shared experts' gate|up both read h: one launch at decode
    const ProjectOut outs[] = {{router, a_.rlogits}, {w.shared.gate_up, a_.gu}};
    DI_RETURN_IF_ERROR(project_many(outs, a_.h, a_.h16, T));
  } else {
    DI_RETURN_IF_ERROR(project(router, a_.h, H, a_.h16, T, a_.rlogits, E));
  }
  kc::RoutingArgs r = routing_args(c);
  r.logits = a_.rlogits;
  r.rows = T;
  const bool v3 = c.routing == Routing::kSigmoidNoAux;
  r.score = v3 ? kc::RouterScore::kSigmoid : kc::RouterScore::kSoftmax;
  r.bias = v3 ? w.correction_bias : nullptr;
  if (c.routing != Routing::kSoftmaxGreedy) {
    r.n_group = c.n_group;
    r.topk_group = c.topk_group;
  }
  r.group_score = v3 ? kc::GroupScore::kTop2Sum : kc::GroupScore::kMax;
  r.normalize = v3 && c.norm_topk_prob;  // as moe.cpp: deepseek_v2 never renormalises
  r.expert_ids = a_.eids;
  r.expert_weights = a_.ew;
  DI_RETURN_IF_ERROR(kc::moe_route(r, stream_));
  // The shared experts write the output; routed experts add to it, in expert order as on the CPU.
  if (w.shared.inter > 0) {
    DI_RETURN_IF_ERROR(mlp_down(w.shared, T, a_.out));
  } else {
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemsetAsync(a_.out, 0, T * H * 4, static_cast<cudaStream_t>(stream_)),
                                       "cudaMemsetAsync"));
  }
  return grouped ? moe_routed_grouped(w) : moe_routed_by_expert(w);
}

Status MlaCudaModel::moe_routed_grouped(const MlaCudaLayer& w) {
  kc::MoeGroupedArgs g = moe_grouped_args(config_);
  g.w13 = w.gate_up_table;
  g.w2 = w.down_table;
  g.fp8 = experts_fp8_;
  g.w13_scale = w.gate_up_scale_table;
  g.w2_scale = w.down_scale_table;
  g.fp8_block_rows = experts_fp8_ ? w.experts.front().gate_up.fp8.block_rows : 1;
  g.fp8_w2_block_rows = experts_fp8_ ? w.experts.front().down.fp8.block_rows : 1;
  g.swiglu_limit = std::numeric_limits<float>::infinity();  // plain SwiGLU: no clip
  return run_grouped_experts(
      g, a_.h, rows_, {a_.eids, a_.ew, a_.offsets, a_.slot_pair, a_.pair_act, a_.pair_y, bad_id_.device()}, a_.out);
}

Status MlaCudaModel::moe_routed_by_expert(const MlaCudaLayer& w) {
  const MlaConfig& c = config_;
  const int64_t T = rows_, H = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok;
  // Which rows each expert takes: the routing comes back to the host (one sync per MoE layer).
  DI_ASSIGN_OR_RETURN(const std::vector<int64_t> count,
                      expert_rows_.group(a_.eids, a_.ew, T, K, E, a_.erows, a_.erow_weights, stream_, c.model_type));
  const bool bf16 = dtype_ != DType::kF32 && !experts_biased_;
  auto* gx16 = reinterpret_cast<uint16_t*>(a_.gx16);
  if (bf16) DI_RETURN_IF_ERROR(kc::gather_rows_bf16(a_.h, a_.erows, count[E], H, gx16, stream_));
  if (bf16 && experts_fp8_) {  // each expert's pairs against its fp8 weights (bf16 rows, as gathered)
    const int64_t I = c.moe_intermediate_size;
    const float no_clip = std::numeric_limits<float>::infinity();
    auto* act16 = reinterpret_cast<uint16_t*>(a_.act16);
    for (int64_t e = 0; e < E; ++e) {
      const int64_t n = count[e + 1] - count[e];  // distinct experts per token: at most T rows
      if (n == 0) continue;
      const MlaCudaMlp& ex = w.experts[e];
      DI_RETURN_IF_ERROR(project(ex.gate_up, nullptr, H, gx16 + count[e] * H, n, a_.gu, 2 * I));
      DI_RETURN_IF_ERROR(kc::clamped_swiglu_bf16(a_.gu, n, I, no_clip, act16, stream_));
      DI_RETURN_IF_ERROR(project(ex.down, nullptr, I, act16, n, a_.y, H));
      DI_RETURN_IF_ERROR(
          kc::scatter_add_rows(a_.y, a_.erows + count[e], a_.erow_weights + count[e], n, H, a_.out, stream_));
    }
    return Status::ok();
  }
  if (bf16) {  // grouped products over runs of experts
    ExpertRuns runs{.count = &count, .x16 = gx16, .rows = a_.erows, .weights = a_.erow_weights, .hidden = H,
                    .inter = c.moe_intermediate_size, .max_rows = T,
                    .limit = std::numeric_limits<float>::infinity(), .gate_up = a_.gu,
                    .act16 = reinterpret_cast<uint16_t*>(a_.act16), .y = a_.y, .out = a_.out};
    for (const MlaCudaMlp& ex : w.experts) {
      runs.w13.push_back(ex.gate_up.dense);
      runs.w2.push_back(ex.down.dense);
    }
    return experts_in_runs(runs);
  }
  for (int64_t e = 0; e < E; ++e) {
    const int64_t n = count[e + 1] - count[e];  // distinct experts per token: at most T rows
    if (n == 0) continue;
    DI_RETURN_IF_ERROR(kc::gather_rows(a_.h, a_.erows + count[e], n, H, a_.gx, stream_));
    DI_RETURN_IF_ERROR(mlp(w.experts[e], a_.gx, nullptr, n, a_.y));
    DI_RETURN_IF_ERROR(
        kc::scatter_add_rows(a_.y, a_.erows + count[e], a_.erow_weights + count[e], n, H, a_.out, stream_));
  }
  return Status::ok();
}

}  // namespace di::engine::deepseek_v2

#endif  // DI_WITH_CUDA
