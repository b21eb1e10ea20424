// MlaCudaModel: weight upload and the layer loop on the GPU (the forward plumbing is DeviceModel's). See
// mla_cuda_model.h. Each step mirrors the CPU model (mla_attention.cpp's absorbed path, moe.cpp)
// in the same order, so fp32 results agree to rounding; the kernels live in kernels/cuda/.
#ifdef DI_WITH_CUDA

#include "engine/model/deepseek_v2/mla_cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model/cuda/workspace.h"
#include "kernels/cuda/cache_rows.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/moe_experts.h"
#include "kernels/cuda/moe_routing.h"
#include "kernels/cuda/rope_interleaved.h"
#include "kernels/cuda/sink_attention.h"

namespace di::engine::deepseek_v2 {
namespace kc = di::kernels::cuda;
using kc::DType;

namespace {

constexpr int64_t kActivationReserve = int64_t{2} << 30;  // workspaces besides the caches
constexpr float kLatentNormEps = 1e-6f;  // transformers' q_a / kv_a layernorms ignore rms_norm_eps

}  // namespace


MlaCudaModel::MlaCudaModel(MlaConfig config, DType dtype, const ModelOptions& options, std::string model_dir)
    : DeviceModel(dtype, options, kActivationReserve),
      config_(std::move(config)),
      rope_(config_.rope, config_.rope_interleave ? RopeLayout::kInterleaved : RopeLayout::kHalf),
      weights_(dtype) {
  const MlaConfig& c = config_;
  set_info(c.model_type, std::move(model_dir), c);
  // The CPU model's one group: kv_a_layernorm(c_kv) | rope(k_pe) per token per layer.
  groups_.push_back({"mla_latent", CacheKind::kFull, c.num_hidden_layers,
                     static_cast<int64_t>((int64_t{c.kv_lora_rank} + c.qk_rope_head_dim) * sizeof(float)), 0, 1, 0});
}

Status MlaCudaModel::init_device() {
  DI_RETURN_IF_ERROR(open_stream());
  return upload_f32(rope_.inv_freq(), inv_freq_);
}

Status MlaCudaModel::put_mlp(const MlpWeights& h, MlaCudaMlp& d) {
  const int64_t I = h.intermediate, H = config_.hidden_size;
  d.inter = I;
  if (I == 0) return Status::ok();
  std::vector<float> gu(static_cast<size_t>(2 * I * H));
  std::memcpy(gu.data(), h.gate.f32(), static_cast<size_t>(I * H) * 4);
  std::memcpy(gu.data() + I * H, h.up.f32(), static_cast<size_t>(I * H) * 4);
  DI_ASSIGN_OR_RETURN(d.gate_up, weights_.put(gu.data(), 2 * I * H));
  DI_ASSIGN_OR_RETURN(d.down, weights_.put(h.down.f32(), H * I));
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
  const int64_t H = c.hidden_size, V = c.vocab_size, nh = c.num_attention_heads, qk = c.qk_head_dim();
  const int64_t nope = c.qk_nope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank, rope = c.qk_rope_head_dim;
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
    DI_ASSIGN_OR_RETURN(d.input_norm, weights_.put_f32(h.input_layernorm, H));
    DI_ASSIGN_OR_RETURN(d.post_norm, weights_.put_f32(h.post_attention_layernorm, H));
    if (c.q_lora_rank > 0) {
      const int64_t r = c.q_lora_rank;
      DI_ASSIGN_OR_RETURN(d.q_a_proj, weights_.put(a.q_a_proj.f32(), r * H));
      DI_ASSIGN_OR_RETURN(d.q_a_bias, weights_.put_f32(a.q_a_bias, r));
      DI_ASSIGN_OR_RETURN(d.q_a_norm, weights_.put_f32(a.q_a_layernorm, r));
      DI_ASSIGN_OR_RETURN(d.q_b_proj, weights_.put(a.q_b_proj.f32(), nh * qk * r));
    } else {
      DI_ASSIGN_OR_RETURN(d.q_proj, weights_.put(a.q_proj.f32(), nh * qk * H));
    }
    DI_ASSIGN_OR_RETURN(d.kv_a_proj, weights_.put(a.kv_a_proj.f32(), (kvl + rope) * H));
    DI_ASSIGN_OR_RETURN(d.kv_a_bias, weights_.put_f32(a.kv_a_bias, kvl + rope));
    DI_ASSIGN_OR_RETURN(d.kv_a_norm, weights_.put_f32(a.kv_a_layernorm, kvl));
    DI_ASSIGN_OR_RETURN(d.kv_b_proj, weights_.put(a.kv_b_proj, nh * (nope + v) * kvl));
    DI_ASSIGN_OR_RETURN(d.w_uk_t, weights_.put(a.w_uk_t, nh * kvl * nope));
    DI_ASSIGN_OR_RETURN(d.o_proj, weights_.put(a.o_proj.f32(), H * nh * v));
    DI_ASSIGN_OR_RETURN(d.o_bias, weights_.put_f32(a.o_bias, H));
    d.is_moe = h.is_moe;
    if (!h.is_moe) {
      DI_RETURN_IF_ERROR(put_mlp(h.mlp, d.mlp));
      continue;
    }
    DI_ASSIGN_OR_RETURN(d.router, weights_.put(h.moe.gate, E * H));
    DI_ASSIGN_OR_RETURN(d.correction_bias, weights_.put_f32(h.moe.e_score_correction_bias, E));
    d.experts.resize(E);
    for (int64_t e = 0; e < E; ++e) DI_RETURN_IF_ERROR(put_mlp(h.moe.experts[e], d.experts[e]));
    DI_RETURN_IF_ERROR(put_mlp(h.moe.shared, d.shared));
  }
  return Status::ok();
}

Result<std::unique_ptr<Model>> MlaCudaModel::load(const std::string& model_dir, MlaConfig config,
                                                  std::unique_ptr<MlaWeights> host, const ModelOptions& options) {
  if (config.num_experts_per_tok > kc::kMaxRoutedPerToken)
    return Status::unsupported("device 'cuda': num_experts_per_tok " + std::to_string(config.num_experts_per_tok) +
                               " is above " + std::to_string(kc::kMaxRoutedPerToken));
  if (config.n_group > kc::kMaxExpertGroups)
    return Status::unsupported("device 'cuda': n_group " + std::to_string(config.n_group) + " is above " +
                               std::to_string(kc::kMaxExpertGroups));
  DType dtype = DType::kBF16;
  if (const TensorView* t = host->store.checkpoint->find("model.embed_tokens.weight"))
    dtype = t->dtype == engine::DType::kF32 ? DType::kF32 : DType::kBF16;
  std::unique_ptr<MlaCudaModel> m(new MlaCudaModel(std::move(config), dtype, options, model_dir));
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->upload(*host));
  return std::unique_ptr<Model>(std::move(m));
}

Status MlaCudaModel::reserve(const ForwardBatch& batch) {
  const MlaConfig& c = config_;
  int64_t Lm = 1, Em = 1;
  for (const SequenceInput& s : batch.seqs) {
    Lm = std::max<int64_t>(Lm, s.num_tokens);
    Em = std::max<int64_t>(Em, s.start_pos + s.num_tokens);
  }
  max_keys_ = Em;
  const int64_t H = c.hidden_size, nh = c.num_attention_heads, qk = c.qk_head_dim(), kvl = c.kv_lora_rank,
                entry = kvl + c.qk_rope_head_dim, v = c.v_head_dim, E = std::max(1, c.n_routed_experts),
                K = std::max(1, c.num_experts_per_tok), qlr = std::max(1, c.q_lora_rank);
  const int64_t I = std::max({int64_t{c.intermediate_size}, int64_t{c.moe_intermediate_size},
                              int64_t{c.moe_intermediate_size} * c.n_shared_experts});
  const int64_t max_k = std::max({H, qlr, nh * v, I, int64_t{c.qk_nope_head_dim}, kvl});
  std::vector<int64_t> floats = {Lm * H,      Lm * H,      Lm * H,          Lm * qlr, Lm * nh * qk, Lm * entry,
                            Lm * nh * entry, Lm * nh * entry, Lm * nh * v, Lm * nh * max_keys_, Lm * E, Lm * K,
                            Lm * H,      Lm * 2 * I,  Lm * I,          Lm * H,   Lm * K};
  std::vector<int64_t> ints = {Lm * K, Lm * K};
  DI_ASSIGN_OR_RETURN(cuda::Workspace w,
                      cuda::Workspace::carve(act_, std::move(floats), std::move(ints), Lm * max_k * 2));
  Act& a = a_;
  a.x = w.f32(), a.h = w.f32(), a.out = w.f32(), a.qa = w.f32(), a.q = w.f32(), a.ckv = w.f32(), a.qlat = w.f32(),
  a.olat = w.f32(), a.attn = w.f32();
  a.att_scratch = w.f32(), a.rlogits = w.f32(), a.ew = w.f32(), a.gx = w.f32(), a.gu = w.f32(), a.act = w.f32(),
  a.y = w.f32();
  a.erow_weights = w.f32();
  a.eids = w.i32(), a.erows = w.i32();
  linear_stage_ = w.rest();
  return Status::ok();
}

Result<float*> MlaCudaModel::enqueue_forward(const ForwardBatch& batch, int64_t* rows) {
  return enqueue_sequences(
      batch, config_.max_position_embeddings, rows, [&] { return reserve(batch); },
      [&](const Seq& seq, float* out) { return run_sequence(seq, out); });
}

Status MlaCudaModel::run_sequence(const Seq& seq, float* logits) {
  const MlaConfig& c = config_;
  const int64_t L = seq.L, H = c.hidden_size;
  const float eps = static_cast<float>(c.rms_norm_eps);
  DI_RETURN_IF_ERROR(kc::embedding(seq.ids, L, embed_, H, a_.x, DType::kF32, stream_));  // fp32 table
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.x, layers_[0].input_norm, a_.h, L, 1, H, H, eps, DType::kF32, stream_));
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const MlaCudaLayer& w = layers_[l];
    DI_RETURN_IF_ERROR(attention(seq, l));
    DI_RETURN_IF_ERROR(kc::add_rms_norm(a_.x, a_.out, w.post_norm, a_.h, L, H, eps, DType::kF32, stream_));
    if (w.is_moe) {
      DI_RETURN_IF_ERROR(moe(seq, l));
    } else {
      DI_RETURN_IF_ERROR(mlp(w.mlp, a_.h, L, a_.out));
    }
    // The residual add fused with the next norm (the next layer's input norm, or the final one).
    const float* next = l + 1 < c.num_hidden_layers ? layers_[l + 1].input_norm : norm_;
    DI_RETURN_IF_ERROR(kc::add_rms_norm(a_.x, a_.out, next, a_.h, L, H, eps, DType::kF32, stream_));
  }
  const int64_t first = seq.all_logits ? 0 : L - 1, rows = L - first;
  return linear(a_.h + first * H, rows, H, H, head_, c.vocab_size, logits, c.vocab_size);
}

Status MlaCudaModel::rope(float* x, int64_t L, int64_t row_stride, int64_t count, int64_t width, int64_t start_pos) {
  const int64_t rd = rope_.dim();
  if (config_.rope_interleave)
    return kc::rope_interleaved(x, L, row_stride, count, width, width, start_pos, 1, inv_freq_.as<const float>(), rd,
                                rope_.attention_scaling(), false, stream_);
  // rotate_half pairs on the trailing rd channels of each vector.
  return kc::rope_half(x + (width - rd), L, count, width, row_stride, positions_.as<const int64_t>(),
                       inv_freq_.as<const float>(), rd, rope_.attention_scaling(), DType::kF32, stream_);
}

Status MlaCudaModel::attention(const Seq& seq, int32_t layer) {
  const MlaConfig& c = config_;
  const MlaCudaLayer& w = layers_[layer];
  const int64_t L = seq.L, s = seq.s, H = c.hidden_size, nh = c.num_attention_heads;
  const int64_t nope = c.qk_nope_head_dim, rd = c.qk_rope_head_dim, v = c.v_head_dim, kvl = c.kv_lora_rank;
  const int64_t qk = nope + rd, entry = kvl + rd;
  if (!config_.rope_interleave) {  // rope_half reads each row's position from the device
    std::vector<int64_t> pos(static_cast<size_t>(L));
    for (int64_t i = 0; i < L; ++i) pos[i] = s + i;
    if (L * 8 > positions_.bytes()) DI_RETURN_IF_ERROR(positions_.allocate(std::max(L * 8, 2 * positions_.bytes())));
    DI_RETURN_IF_ERROR(kc::copy_to_device_async(positions_.get(), pos.data(), L * 8, stream_));
    DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));  // pos is a host temporary
  }
  if (c.q_lora_rank > 0) {
    const int64_t r = c.q_lora_rank;
    DI_RETURN_IF_ERROR(linear(a_.h, L, H, H, w.q_a_proj, r, a_.qa, r));
    if (w.q_a_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.qa, w.q_a_bias, L, r, r, DType::kF32, stream_));
    DI_RETURN_IF_ERROR(kc::rms_norm(a_.qa, w.q_a_norm, a_.qa, L, 1, r, r, kLatentNormEps, DType::kF32, stream_));
    DI_RETURN_IF_ERROR(linear(a_.qa, L, r, r, w.q_b_proj, nh * qk, a_.q, nh * qk));
  } else {
    DI_RETURN_IF_ERROR(linear(a_.h, L, H, H, w.q_proj, nh * qk, a_.q, nh * qk));
  }
  DI_RETURN_IF_ERROR(linear(a_.h, L, H, H, w.kv_a_proj, entry, a_.ckv, entry));
  if (w.kv_a_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.ckv, w.kv_a_bias, L, entry, entry, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.ckv, w.kv_a_norm, a_.ckv, L, 1, kvl, entry, kLatentNormEps, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(rope(a_.q, L, nh * qk, nh, qk, s));
  DI_RETURN_IF_ERROR(rope(a_.ckv, L, entry, 1, entry, s));
  DI_RETURN_IF_ERROR(kc::write_cache_rows(a_.ckv, entry, L, entry, seq.views[0], layer, s, 0, 0, stream_));

  // Absorbed queries: q_nope through each head's key up-projection into latent space, rope as is.
  const auto* uk = static_cast<const uint8_t*>(w.w_uk_t);
  const auto* kvb = static_cast<const uint8_t*>(w.kv_b_proj);
  const int64_t wb = kc::dtype_bytes(dtype_);
  for (int64_t head = 0; head < nh; ++head)
    DI_RETURN_IF_ERROR(linear(a_.q + head * qk, L, nope, nh * qk, uk + head * kvl * nope * wb, kvl,
                              a_.qlat + head * entry, nh * entry));
  DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemcpy2DAsync(a_.qlat + kvl, entry * 4, a_.q + nope, qk * 4, rd * 4, L * nh,
                                                       cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream_)),
                                     "cudaMemcpy2DAsync"));
  // MQA with one K=V head of latent | rope over every position so far; no sink. The window covers
  // the whole context, so position p of the cache is entry p % window = p.
  kc::SinkAttentionArgs args;
  args.q = a_.qlat;
  args.kv = a_.ckv;
  args.sinks = nullptr;
  args.out = a_.olat;
  args.scratch = a_.att_scratch;
  args.num_tokens = L;
  args.start_pos = s;
  args.num_heads = static_cast<int32_t>(nh);
  args.head_dim = static_cast<int32_t>(entry);
  args.scale = static_cast<float>(c.softmax_scale);
  args.window = s + L;
  args.window_cache = seq.views[0];
  args.window_layer = layer;
  args.max_keys = max_keys_;
  DI_RETURN_IF_ERROR(kc::sink_attention(args, stream_));
  // The output's latent part through each head's value up-projection (its rope tail is unused).
  for (int64_t head = 0; head < nh; ++head)
    DI_RETURN_IF_ERROR(linear(a_.olat + head * entry, L, kvl, nh * entry, kvb + (head * (nope + v) + nope) * kvl * wb,
                              v, a_.attn + head * v, nh * v));
  DI_RETURN_IF_ERROR(linear(a_.attn, L, nh * v, nh * v, w.o_proj, H, a_.out, H));
  if (w.o_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.out, w.o_bias, L, H, H, DType::kF32, stream_));
  return Status::ok();
}

Status MlaCudaModel::mlp(const MlaCudaMlp& m, const float* x, int64_t rows, float* y) {
  const int64_t H = config_.hidden_size, I = m.inter;
  DI_RETURN_IF_ERROR(linear(x, rows, H, H, m.gate_up, 2 * I, a_.gu, 2 * I));
  if (m.gate_up_bias) DI_RETURN_IF_ERROR(kc::add_bias(a_.gu, m.gate_up_bias, rows, 2 * I, 2 * I, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(kc::silu_and_mul(a_.gu, rows, I, a_.act, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(linear(a_.act, rows, I, I, m.down, H, y, H));
  if (m.down_bias) DI_RETURN_IF_ERROR(kc::add_bias(y, m.down_bias, rows, H, H, DType::kF32, stream_));
  return Status::ok();
}

Status MlaCudaModel::moe(const Seq& seq, int32_t layer) {
  const MlaConfig& c = config_;
  const MlaCudaLayer& w = layers_[layer];
  const int64_t L = seq.L, H = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok;
  DI_RETURN_IF_ERROR(linear(a_.h, L, H, H, w.router, E, a_.rlogits, E));
  kc::RoutingArgs r;
  r.logits = a_.rlogits;
  r.rows = L;
  r.experts = static_cast<int32_t>(E);
  r.top_k = static_cast<int32_t>(K);
  const bool v3 = c.routing == Routing::kSigmoidNoAux;
  r.score = v3 ? kc::RouterScore::kSigmoid : kc::RouterScore::kSoftmax;
  r.bias = v3 ? w.correction_bias : nullptr;
  if (c.routing != Routing::kSoftmaxGreedy) {
    r.n_group = c.n_group;
    r.topk_group = c.topk_group;
  }
  r.group_score = v3 ? kc::GroupScore::kTop2Sum : kc::GroupScore::kMax;
  r.normalize = v3 && c.norm_topk_prob;  // as moe.cpp: deepseek_v2 never renormalises
  r.routed_scaling = static_cast<float>(c.routed_scaling_factor);
  r.expert_ids = a_.eids;
  r.expert_weights = a_.ew;
  DI_RETURN_IF_ERROR(kc::moe_route(r, stream_));
  // The shared experts write the output; routed experts add to it, in expert order as on the CPU.
  if (w.shared.inter > 0) {
    DI_RETURN_IF_ERROR(mlp(w.shared, a_.h, L, a_.out));
  } else {
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemsetAsync(a_.out, 0, L * H * 4, static_cast<cudaStream_t>(stream_)),
                                       "cudaMemsetAsync"));
  }
  // Which rows each expert takes: the routing comes back to the host (one sync per MoE layer).
  DI_ASSIGN_OR_RETURN(const std::vector<int64_t> count,
                      expert_rows_.group(a_.eids, a_.ew, L, K, E, a_.erows, a_.erow_weights, stream_, c.model_type));
  for (int64_t e = 0; e < E; ++e) {
    const int64_t n = count[e + 1] - count[e];  // distinct experts per token: at most L rows
    if (n == 0) continue;
    DI_RETURN_IF_ERROR(kc::gather_rows(a_.h, a_.erows + count[e], n, H, a_.gx, stream_));
    DI_RETURN_IF_ERROR(mlp(w.experts[e], a_.gx, n, a_.y));
    DI_RETURN_IF_ERROR(
        kc::scatter_add_rows(a_.y, a_.erows + count[e], a_.erow_weights + count[e], n, H, a_.out, stream_));
  }
  // The copies above read host vectors asynchronously: they must finish before the next reuse.
  return kc::stream_synchronize(stream_);
}

}  // namespace di::engine::deepseek_v2

#endif  // DI_WITH_CUDA
