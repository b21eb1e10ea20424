// MlaCudaModel: weight upload, per-forward metadata and the layer loop on the GPU. See
// mla_cuda_model.h. Each step mirrors the CPU model (mla_attention.cpp's absorbed path, moe.cpp)
// in the same order, so fp32 results agree to rounding; the kernels live in kernels/cuda/.
#ifdef DI_WITH_CUDA

#include "engine/model/deepseek_v2/mla_cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model/batch_check.h"
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

int64_t align256(int64_t b) { return (b + 255) / 256 * 256; }

}  // namespace

struct MlaCudaModel::Seq {
  int64_t L = 0, s = 0;
  bool all_logits = false;
  const int32_t* ids = nullptr;  // device
  kc::CacheView latent;
};

MlaCudaModel::MlaCudaModel(MlaConfig config, DType dtype, const ModelOptions& options, std::string model_dir)
    : config_(std::move(config)),
      dtype_(dtype),
      rope_(config_.rope, config_.rope_interleave ? RopeLayout::kInterleaved : RopeLayout::kHalf),
      memory_(options.gpu_memory_utilization, kActivationReserve),
      weights_(dtype) {
  const MlaConfig& c = config_;
  info_.family = c.model_type;
  info_.model_dir = std::move(model_dir);
  info_.vocab_size = c.vocab_size;
  info_.max_position_embeddings = c.max_position_embeddings;
  info_.bos_token_id = c.bos_token_id;
  info_.eos_token_ids = c.eos_token_ids;
  info_.device = "cuda";
  // The CPU model's one group: kv_a_layernorm(c_kv) | rope(k_pe) per token per layer.
  groups_.push_back({"mla_latent", CacheKind::kFull, c.num_hidden_layers,
                     static_cast<int64_t>((int64_t{c.kv_lora_rank} + c.qk_rope_head_dim) * sizeof(float)), 0, 1, 0});
}

MlaCudaModel::~MlaCudaModel() {
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Status MlaCudaModel::init_device() {
  if (kc::device_count() == 0) return Status::device("device 'cuda': no CUDA GPU is visible");
  cudaStream_t s = nullptr;
  DI_RETURN_IF_ERROR(kc::cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  stream_ = s;
  DI_ASSIGN_OR_RETURN(gemm_, kc::Gemm::create(stream_));
  const std::vector<float>& f = rope_.inv_freq();
  DI_RETURN_IF_ERROR(inv_freq_.allocate(static_cast<int64_t>(f.size() * 4)));
  return kc::copy_to_device(inv_freq_.get(), f.data(), static_cast<int64_t>(f.size() * 4));
}

Status MlaCudaModel::put_mlp(const MlpWeights& h, MlaCudaMlp& d) {
  const int64_t I = h.intermediate, H = config_.hidden_size;
  d.inter = I;
  if (I == 0) return Status::ok();
  std::vector<float> gu(static_cast<size_t>(2 * I * H));
  std::memcpy(gu.data(), h.gate, static_cast<size_t>(I * H) * 4);
  std::memcpy(gu.data() + I * H, h.up, static_cast<size_t>(I * H) * 4);
  DI_ASSIGN_OR_RETURN(d.gate_up, weights_.put(gu.data(), 2 * I * H));
  DI_ASSIGN_OR_RETURN(d.down, weights_.put(h.down, H * I));
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
      DI_ASSIGN_OR_RETURN(d.q_a_proj, weights_.put(a.q_a_proj, r * H));
      DI_ASSIGN_OR_RETURN(d.q_a_bias, weights_.put_f32(a.q_a_bias, r));
      DI_ASSIGN_OR_RETURN(d.q_a_norm, weights_.put_f32(a.q_a_layernorm, r));
      DI_ASSIGN_OR_RETURN(d.q_b_proj, weights_.put(a.q_b_proj, nh * qk * r));
    } else {
      DI_ASSIGN_OR_RETURN(d.q_proj, weights_.put(a.q_proj, nh * qk * H));
    }
    DI_ASSIGN_OR_RETURN(d.kv_a_proj, weights_.put(a.kv_a_proj, (kvl + rope) * H));
    DI_ASSIGN_OR_RETURN(d.kv_a_bias, weights_.put_f32(a.kv_a_bias, kvl + rope));
    DI_ASSIGN_OR_RETURN(d.kv_a_norm, weights_.put_f32(a.kv_a_layernorm, kvl));
    DI_ASSIGN_OR_RETURN(d.kv_b_proj, weights_.put(a.kv_b_proj, nh * (nope + v) * kvl));
    DI_ASSIGN_OR_RETURN(d.w_uk_t, weights_.put(a.w_uk_t, nh * kvl * nope));
    DI_ASSIGN_OR_RETURN(d.o_proj, weights_.put(a.o_proj, H * nh * v));
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

Status MlaCudaModel::linear(const float* x, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y,
                            int64_t ldy) {
  if (dtype_ == DType::kF32) return gemm_.linear(x, M, K, ldx, w, N, DType::kF32, y, ldy, DType::kF32);
  // bf16 weights: the activations are rounded to bf16 for the tensor cores, the sum stays fp32.
  DI_RETURN_IF_ERROR(kc::convert_rows_from_f32(x, M, K, ldx, a_.stage, dtype_, stream_));
  return gemm_.linear(a_.stage, M, K, K, w, N, dtype_, y, ldy, DType::kF32);
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
  const int64_t floats[] = {Lm * H,      Lm * H,      Lm * H,          Lm * qlr, Lm * nh * qk, Lm * entry,
                            Lm * nh * entry, Lm * nh * entry, Lm * nh * v, Lm * nh * max_keys_, Lm * E, Lm * K,
                            Lm * H,      Lm * 2 * I,  Lm * I,          Lm * H,   Lm * K};
  const int64_t ints[] = {Lm * K, Lm * K};
  int64_t bytes = 0;
  for (int64_t n : floats) bytes += align256(n * 4);
  for (int64_t n : ints) bytes += align256(n * 4);
  bytes += align256(Lm * max_k * 2);
  if (bytes > act_.bytes()) DI_RETURN_IF_ERROR(act_.allocate(std::max(bytes, act_.bytes() * 3 / 2)));
  auto* p = act_.as<uint8_t>();
  size_t fi = 0, ii = 0;
  auto f = [&]() {
    auto* out = reinterpret_cast<float*>(p);
    p += align256(floats[fi++] * 4);
    return out;
  };
  auto i32 = [&]() {
    auto* out = reinterpret_cast<int32_t*>(p);
    p += align256(ints[ii++] * 4);
    return out;
  };
  Act& a = a_;
  a.x = f(), a.h = f(), a.out = f(), a.qa = f(), a.q = f(), a.ckv = f(), a.qlat = f(), a.olat = f(), a.attn = f();
  a.att_scratch = f(), a.rlogits = f(), a.ew = f(), a.gx = f(), a.gu = f(), a.act = f(), a.y = f();
  a.erow_weights = f();
  a.eids = i32(), a.erows = i32();
  a.stage = p;
  return Status::ok();
}

Status MlaCudaModel::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  const MlaConfig& c = config_;
  DI_ASSIGN_OR_RETURN(int64_t out_rows, check_batch(batch, c.vocab_size, c.max_position_embeddings));
  std::vector<Seq> seqs(batch.seqs.size());
  std::vector<PagedGroupView> views(batch.seqs.size());
  std::vector<size_t> ids_at(batch.seqs.size()), table_at(batch.seqs.size());
  host_meta_.clear();
  for (size_t b = 0; b < batch.seqs.size(); ++b) {
    const SequenceInput& in = batch.seqs[b];
    const std::string where = "seqs[" + std::to_string(b) + "].cache";
    ids_at[b] = host_meta_.size();
    host_meta_.insert(host_meta_.end(), in.tokens, in.tokens + in.num_tokens);
    PagedGroupView& v = views[b];
    if (!in.cache->paged_view(0, &v) || !v.on_device)
      return Status::invalid_argument(where + ": the CUDA model needs a paged cache in device memory");
    const int64_t needed = in.start_pos + in.num_tokens;
    if ((needed - 1) / v.block_size >= v.num_blocks)
      return Status::invalid_argument(where + ": no room for " + std::to_string(needed) + " latent entries");
    table_at[b] = host_meta_.size();
    host_meta_.insert(host_meta_.end(), v.block_ids, v.block_ids + v.num_blocks);
  }
  const int64_t meta_bytes = static_cast<int64_t>(host_meta_.size()) * 4;
  if (meta_bytes > meta_.bytes()) DI_RETURN_IF_ERROR(meta_.allocate(std::max(meta_bytes, 2 * meta_.bytes())));
  DI_RETURN_IF_ERROR(kc::copy_to_device(meta_.get(), host_meta_.data(), meta_bytes));
  const auto* dmeta = meta_.as<const int32_t>();
  for (size_t b = 0; b < batch.seqs.size(); ++b) {
    const SequenceInput& in = batch.seqs[b];
    const PagedGroupView& v = views[b];
    Seq& s = seqs[b];
    s.L = in.num_tokens;
    s.s = in.start_pos;
    s.all_logits = in.all_logits;
    s.ids = dmeta + ids_at[b];
    s.latent.base = reinterpret_cast<uint64_t>(v.base);
    s.latent.layer_stride = v.layer_stride;
    s.latent.block_stride = v.block_stride;
    s.latent.entry_bytes = v.entry_bytes;
    s.latent.block_size = v.block_size;
    s.latent.compress_rate = 1;
    s.latent.block_ids = dmeta + table_at[b];
  }
  DI_RETURN_IF_ERROR(reserve(batch));
  const int64_t lbytes = out_rows * c.vocab_size * 4;
  if (lbytes > logits_.bytes()) DI_RETURN_IF_ERROR(logits_.allocate(std::max(lbytes, logits_.bytes() * 3 / 2)));
  int64_t row = 0;
  for (const Seq& s : seqs) {
    DI_RETURN_IF_ERROR(run_sequence(s, logits_.as<float>() + row * c.vocab_size));
    row += s.all_logits ? s.L : 1;
  }
  logits.resize(static_cast<size_t>(out_rows * c.vocab_size));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(logits.data(), logits_.get(), lbytes, stream_));
  return kc::stream_synchronize(stream_);
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
  DI_RETURN_IF_ERROR(kc::write_cache_rows(a_.ckv, entry, L, entry, seq.latent, layer, s, 0, 0, stream_));

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
  args.window_cache = seq.latent;
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
  host_expert_ids_.resize(static_cast<size_t>(L * K));
  host_expert_weights_.resize(static_cast<size_t>(L * K));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(host_expert_ids_.data(), a_.eids, L * K * 4, stream_));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(host_expert_weights_.data(), a_.ew, L * K * 4, stream_));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));
  std::vector<int64_t> count(static_cast<size_t>(E + 1), 0);
  for (int64_t i = 0; i < L * K; ++i) {
    const int32_t e = host_expert_ids_[i];
    if (e < 0 || e >= E) return Status::internal(c.model_type + " cuda: routed expert " + std::to_string(e));
    ++count[e + 1];
  }
  for (int64_t e = 0; e < E; ++e) count[e + 1] += count[e];
  host_rows_.assign(static_cast<size_t>(L * K), 0);
  host_row_weights_.assign(static_cast<size_t>(L * K), 0.f);
  std::vector<int64_t> fill(count.begin(), count.end() - 1);
  for (int64_t row = 0; row < L; ++row)
    for (int64_t k = 0; k < K; ++k) {
      const int32_t e = host_expert_ids_[row * K + k];
      host_rows_[fill[e]] = static_cast<int32_t>(row);
      host_row_weights_[fill[e]++] = host_expert_weights_[row * K + k];
    }
  DI_RETURN_IF_ERROR(kc::copy_to_device_async(a_.erows, host_rows_.data(), L * K * 4, stream_));
  DI_RETURN_IF_ERROR(kc::copy_to_device_async(a_.erow_weights, host_row_weights_.data(), L * K * 4, stream_));
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
