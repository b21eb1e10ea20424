// V4CudaModel: weight upload and the layer loop on the GPU (the forward plumbing is DeviceModel's). See
// v4_cuda_model.h. Each step mirrors the CPU model's function of the same name (attention.cpp,
// compressor.cpp, hyper_connection.cpp, moe.cpp) in the same order, so fp32 results agree to
// rounding; the kernels live in kernels/cuda/ (one concept per file).
#ifdef DI_WITH_CUDA

#include "engine/model/deepseek_v4/v4_cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model/cuda/workspace.h"
#include "engine/model/deepseek_v4/v4_model.h"
#include "kernels/cuda/cache_rows.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/hyper_connection.h"
#include "kernels/cuda/indexer_topk.h"
#include "kernels/cuda/kv_compress.h"
#include "kernels/cuda/moe_experts.h"
#include "kernels/cuda/moe_routing.h"
#include "kernels/cuda/rope_interleaved.h"
#include "kernels/cuda/sink_attention.h"

namespace di::engine::deepseek_v4 {
namespace kc = di::kernels::cuda;
using kc::DType;

namespace {

constexpr int64_t kActivationReserve = int64_t{2} << 30;  // workspaces besides the caches

}  // namespace


V4CudaModel::V4CudaModel(DeepseekV4Config config, DType dtype, const ModelOptions& options, std::string model_dir)
    : DeviceModel(dtype, options, kActivationReserve), config_(std::move(config)), weights_(dtype) {
  const DeepseekV4Config& c = config_;
  set_info("deepseek_v4", std::move(model_dir), c);
  ropes_.main = Rope(c.rope_main, c.head_dim);
  ropes_.compress = Rope(c.rope_compress, c.head_dim);
  groups_ = make_cache_groups(c, &layout_);
}

Status V4CudaModel::init_device() {
  DI_RETURN_IF_ERROR(open_stream());
  DI_RETURN_IF_ERROR(upload_f32(ropes_.main.inv_freq(), inv_freq_main_));
  return upload_f32(ropes_.compress.inv_freq(), inv_freq_compress_);
}

Status V4CudaModel::upload(const DeepseekV4Weights& w) {
  const DeepseekV4Config& c = config_;
  const int64_t H = c.hidden_size, V = c.vocab_size, hc = c.hc_mult, mix = (2 + hc) * hc;
  const int64_t nh = c.num_attention_heads, hd = c.head_dim, qlr = c.q_lora_rank, I = c.moe_intermediate_size;
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok;
  DI_ASSIGN_OR_RETURN(embed_, weights_.put(w.embed, V * H));
  if (w.head == w.embed) {
    head_ = embed_;
  } else {
    DI_ASSIGN_OR_RETURN(head_, weights_.put(w.head, V * H));
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
  auto put_expert = [&](const ExpertWeights& h, V4CudaExpert& d) -> Status {
    std::vector<float> w13(static_cast<size_t>(2 * I * H));
    std::memcpy(w13.data(), h.w1.f32(), static_cast<size_t>(I * H) * 4);
    std::memcpy(w13.data() + I * H, h.w3.f32(), static_cast<size_t>(I * H) * 4);
    DI_ASSIGN_OR_RETURN(d.w13, weights_.put(w13.data(), 2 * I * H));
    DI_ASSIGN_OR_RETURN(d.w2, weights_.put(h.w2.f32(), H * I));
    return Status::ok();
  };
  layers_.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& h = w.layers[l];
    V4CudaLayer& d = layers_[l];
    DI_ASSIGN_OR_RETURN(d.attn_norm, weights_.put_f32(h.attn_norm, H));
    DI_ASSIGN_OR_RETURN(d.ffn_norm, weights_.put_f32(h.ffn_norm, H));
    DI_RETURN_IF_ERROR(put_hc(h.hc_attn, d.hc_attn));
    DI_RETURN_IF_ERROR(put_hc(h.hc_ffn, d.hc_ffn));
    const AttentionWeights& a = h.attn;
    DI_ASSIGN_OR_RETURN(d.wq_a, weights_.put(a.wq_a.f32(), qlr * H));
    DI_ASSIGN_OR_RETURN(d.q_norm, weights_.put_f32(a.q_norm, qlr));
    DI_ASSIGN_OR_RETURN(d.wq_b, weights_.put(a.wq_b.f32(), nh * hd * qlr));
    DI_ASSIGN_OR_RETURN(d.wkv, weights_.put(a.wkv.f32(), hd * H));
    DI_ASSIGN_OR_RETURN(d.kv_norm, weights_.put_f32(a.kv_norm, hd));
    DI_ASSIGN_OR_RETURN(d.wo_a, weights_.put(a.wo_a.f32(), int64_t{c.o_groups} * c.o_lora_rank * (nh * hd / c.o_groups)));
    DI_ASSIGN_OR_RETURN(d.wo_b, weights_.put(a.wo_b.f32(), H * c.o_groups * c.o_lora_rank));
    DI_ASSIGN_OR_RETURN(d.sinks, weights_.put_f32(a.sinks, nh));
    if (c.layer_types[l] != AttnType::kSliding) DI_RETURN_IF_ERROR(put_compressor(a.compressor, d.compressor));
    if (c.layer_types[l] == AttnType::kCSA) {
      DI_RETURN_IF_ERROR(put_compressor(a.indexer, d.indexer));
      DI_ASSIGN_OR_RETURN(d.index_wq_b, weights_.put(a.index_wq_b.f32(), int64_t{c.index_n_heads} * c.index_head_dim * qlr));
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
    for (int64_t e = 0; e < E; ++e) DI_RETURN_IF_ERROR(put_expert(m.experts[e], d.experts[e]));
    DI_RETURN_IF_ERROR(put_expert(m.shared, d.shared));
  }
  return Status::ok();
}

Result<std::unique_ptr<Model>> V4CudaModel::load(const std::string& model_dir, DeepseekV4Config config,
                                                 std::unique_ptr<DeepseekV4Weights> host,
                                                 const ModelOptions& options) {
  if (config.hc_mult > kc::kMaxHcStreams)
    return Status::unsupported("device 'cuda': hc_mult " + std::to_string(config.hc_mult) + " is above " +
                               std::to_string(kc::kMaxHcStreams));
  if (config.num_experts_per_tok > kc::kMaxRoutedPerToken)
    return Status::unsupported("device 'cuda': num_experts_per_tok " + std::to_string(config.num_experts_per_tok) +
                               " is above " + std::to_string(kc::kMaxRoutedPerToken));
  DType dtype = DType::kBF16;
  for (const char* name : {"model.embed_tokens.weight", "embed.weight", "model.embed.weight"})
    if (const TensorView* t = host->store.checkpoint->find(name))
      dtype = t->dtype == engine::DType::kF32 ? DType::kF32 : DType::kBF16;
  std::unique_ptr<V4CudaModel> m(new V4CudaModel(std::move(config), dtype, options, model_dir));
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->upload(*host));
  return std::unique_ptr<Model>(std::move(m));
}

Status V4CudaModel::reserve(const ForwardBatch& batch) {
  const DeepseekV4Config& c = config_;
  int64_t Lm = 1, Em = 1;
  for (const SequenceInput& s : batch.seqs) {
    Lm = std::max<int64_t>(Lm, s.num_tokens);
    Em = std::max<int64_t>(Em, s.start_pos + s.num_tokens);
  }
  bool has_csa = false, has_hca = false;
  for (AttnType t : c.layer_types) {
    has_csa |= t == AttnType::kCSA;
    has_hca |= t == AttnType::kHCA;
  }
  const int64_t H = c.hidden_size, hc = c.hc_mult, mix = (2 + hc) * hc, nh = c.num_attention_heads,
                hd = c.head_dim, qlr = c.q_lora_rank, og = c.o_groups, olr = c.o_lora_rank,
                nih = c.index_n_heads, ihd = c.index_head_dim, E = c.n_routed_experts, K = c.num_experts_per_tok,
                I = c.moe_intermediate_size, topk = c.index_topk;
  max_visible_ = has_csa ? Em / c.compress_rate_csa : 0;
  max_keys_ = std::min<int64_t>(Em, c.sliding_window) +
              std::max<int64_t>(has_hca ? Em / c.compress_rate_hca : 0, has_csa ? topk : 0);
  const int64_t cw = 2 * std::max(hd, ihd);
  const int64_t max_k = std::max({H, qlr, nh * hd, og * olr, I});
  // float arrays in carve order below, then int arrays, then the bf16 stage.
  std::vector<int64_t> floats = {Lm * hc * H, Lm * hc * H, Lm * mix, Lm * hc, Lm * hc * hc, Lm * H, Lm * H, Lm * qlr,
                            Lm * nh * hd, Lm * hd, Lm * nh * hd, Lm * og * olr, Lm * cw, Lm * cw,
                            (Lm + 1) * std::max(hd, ihd), Lm * nih * ihd, Lm * nih, Lm * std::max<int64_t>(1, max_visible_),
                            Lm * nh * max_keys_, Lm * E, Lm * K, Lm * H, Lm * 2 * I, Lm * I, Lm * H, Lm * K};
  std::vector<int64_t> ints = {Lm * std::max<int64_t>(1, topk), Lm, Lm * K, Lm * K};
  DI_ASSIGN_OR_RETURN(cuda::Workspace w,
                      cuda::Workspace::carve(act_, std::move(floats), std::move(ints), Lm * max_k * 2));
  Act& a = a_;
  a.streams = w.f32(), a.nstreams = w.f32(), a.mixes = w.f32(), a.post = w.f32(), a.comb = w.f32(), a.x = w.f32(),
  a.out = w.f32();
  a.qr = w.f32(), a.q = w.f32(), a.kv = w.f32(), a.attn = w.f32(), a.grouped = w.f32(), a.ckv = w.f32(),
  a.cgate = w.f32();
  a.entries = w.f32(), a.iq = w.f32(), a.iw = w.f32(), a.scores = w.f32(), a.att_scratch = w.f32(), a.rlogits = w.f32(),
  a.ew = w.f32();
  a.gx = w.f32(), a.gu = w.f32(), a.act = w.f32(), a.y = w.f32(), a.erow_weights = w.f32();
  a.selected = w.i32(), a.count = w.i32(), a.eids = w.i32(), a.erows = w.i32();
  linear_stage_ = w.rest();
  return Status::ok();
}

Status V4CudaModel::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  return forward_sequences(
      batch, 0, logits, [&] { return reserve(batch); },
      [&](const Seq& seq, float* out) { return run_sequence(seq, out); });
}

Status V4CudaModel::hc_pre(const V4CudaHc& hc, int64_t L) {
  const DeepseekV4Config& c = config_;
  const int64_t W = int64_t{c.hc_mult} * c.hidden_size, mix = (2 + int64_t{c.hc_mult}) * c.hc_mult;
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.streams, nullptr, a_.nstreams, L, 1, W, W, static_cast<float>(c.rms_norm_eps),
                                  DType::kF32, stream_));
  DI_RETURN_IF_ERROR(gemm_.linear(a_.nstreams, L, W, W, hc.fn, mix, DType::kF32, a_.mixes, mix, DType::kF32));
  return kc::hc_pre(a_.mixes, hc.base, hc.scale, a_.streams, L, c.hc_mult, c.hidden_size, c.hc_sinkhorn_iters,
                    static_cast<float>(c.hc_eps), a_.x, a_.post, a_.comb, stream_);
}

Status V4CudaModel::run_sequence(const Seq& seq, float* logits) {
  const DeepseekV4Config& c = config_;
  const int64_t L = seq.L, H = c.hidden_size, hc = c.hc_mult;
  const float eps = static_cast<float>(c.rms_norm_eps);
  DI_RETURN_IF_ERROR(kc::hc_embed(seq.ids, L, embed_, H, c.hc_mult, dtype_, a_.streams, stream_));
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const V4CudaLayer& w = layers_[l];
    DI_RETURN_IF_ERROR(hc_pre(w.hc_attn, L));
    DI_RETURN_IF_ERROR(kc::rms_norm(a_.x, w.attn_norm, a_.x, L, 1, H, H, eps, DType::kF32, stream_));
    DI_RETURN_IF_ERROR(attention(seq, l));
    DI_RETURN_IF_ERROR(kc::hc_post(a_.out, a_.post, a_.comb, L, c.hc_mult, H, a_.streams, stream_));
    DI_RETURN_IF_ERROR(hc_pre(w.hc_ffn, L));
    DI_RETURN_IF_ERROR(kc::rms_norm(a_.x, w.ffn_norm, a_.x, L, 1, H, H, eps, DType::kF32, stream_));
    DI_RETURN_IF_ERROR(moe(seq, l));
    DI_RETURN_IF_ERROR(kc::hc_post(a_.out, a_.post, a_.comb, L, c.hc_mult, H, a_.streams, stream_));
  }
  const int64_t first = seq.all_logits ? 0 : L - 1, rows = L - first;
  const float* st = a_.streams + first * hc * H;
  DI_RETURN_IF_ERROR(kc::rms_norm(st, nullptr, a_.nstreams, rows, 1, hc * H, hc * H, eps, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(
      gemm_.linear(a_.nstreams, rows, hc * H, hc * H, hc_head_.fn, hc, DType::kF32, a_.mixes, hc, DType::kF32));
  DI_RETURN_IF_ERROR(kc::hc_head(a_.mixes, hc_head_.base, hc_head_.scale, st, rows, c.hc_mult, H,
                                 static_cast<float>(c.hc_eps), a_.y, stream_));
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.y, norm_, a_.y, rows, 1, H, H, eps, DType::kF32, stream_));
  return linear(a_.y, rows, H, H, head_, c.vocab_size, logits, c.vocab_size);
}

Status V4CudaModel::attention(const Seq& seq, int32_t layer) {
  const DeepseekV4Config& c = config_;
  const V4CudaLayer& w = layers_[layer];
  const AttnType type = c.layer_types[layer];
  const Rope& rope = type == AttnType::kSliding ? ropes_.main : ropes_.compress;
  const float* inv = (type == AttnType::kSliding ? inv_freq_main_ : inv_freq_compress_).as<const float>();
  const int64_t L = seq.L, s = seq.s, H = c.hidden_size, nh = c.num_attention_heads, hd = c.head_dim,
                W = c.sliding_window, qlr = c.q_lora_rank;
  const float eps = static_cast<float>(c.rms_norm_eps);
  DI_RETURN_IF_ERROR(linear(a_.x, L, H, H, w.wq_a, qlr, a_.qr, qlr));
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.qr, w.q_norm, a_.qr, L, 1, qlr, qlr, eps, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(linear(a_.qr, L, qlr, qlr, w.wq_b, nh * hd, a_.q, nh * hd));
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.q, nullptr, a_.q, L, nh, hd, nh * hd, eps, DType::kF32, stream_));  // per head
  DI_RETURN_IF_ERROR(linear(a_.x, L, H, H, w.wkv, hd, a_.kv, hd));
  DI_RETURN_IF_ERROR(kc::rms_norm(a_.kv, w.kv_norm, a_.kv, L, 1, hd, hd, eps, DType::kF32, stream_));
  DI_RETURN_IF_ERROR(
      kc::rope_interleaved(a_.q, L, nh * hd, nh, hd, hd, s, 1, inv, rope.dim(), rope.scale(), false, stream_));
  DI_RETURN_IF_ERROR(kc::rope_interleaved(a_.kv, L, hd, 1, hd, hd, s, 1, inv, rope.dim(), rope.scale(), false, stream_));

  // Compressed entries first: a query may attend to a window that closes at its own token.
  kc::SinkAttentionArgs args;
  const int32_t tl = layout_.type_layer[layer];
  if (type == AttnType::kHCA) {
    DI_RETURN_IF_ERROR(compress(seq, w.compressor, layout_.hca_kv, tl, layout_.hca_state, 0));
    args.entries = seq.views[layout_.hca_kv];
    args.compress_rate = c.compress_rate_hca;
  } else if (type == AttnType::kCSA) {
    DI_RETURN_IF_ERROR(compress(seq, w.compressor, layout_.csa_kv, tl, layout_.csa_state, 0));
    DI_RETURN_IF_ERROR(compress(seq, w.indexer, layout_.csa_index_keys, tl, layout_.csa_state, 4 * hd));
    DI_RETURN_IF_ERROR(indexer(seq, w, tl));
    args.entries = seq.views[layout_.csa_kv];
    args.selected = a_.selected;
    args.selected_count = a_.count;
    args.selected_stride = c.index_topk;
  }
  args.entry_layer = tl;
  args.q = a_.q;
  args.kv = a_.kv;
  args.sinks = w.sinks;
  args.out = a_.attn;
  args.scratch = a_.att_scratch;
  args.num_tokens = L;
  args.start_pos = s;
  args.num_heads = static_cast<int32_t>(nh);
  args.head_dim = static_cast<int32_t>(hd);
  args.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  args.window = W;
  args.window_cache = seq.views[layout_.swa_kv];
  args.window_layer = layer;
  args.max_keys = max_keys_;
  DI_RETURN_IF_ERROR(kc::sink_attention(args, stream_));
  // K=V carried rope into the output's rope slice: rotate it back by the query's position.
  DI_RETURN_IF_ERROR(
      kc::rope_interleaved(a_.attn, L, nh * hd, nh, hd, hd, s, 1, inv, rope.dim(), rope.scale(), true, stream_));

  // Grouped output projection: each group of heads down to o_lora_rank, then one mix to hidden.
  const int64_t groups = c.o_groups, rank = c.o_lora_rank, per_group = nh * hd / groups;
  const auto* wo_a = static_cast<const uint8_t*>(w.wo_a);
  for (int64_t g = 0; g < groups; ++g)
    DI_RETURN_IF_ERROR(linear(a_.attn + g * per_group, L, per_group, nh * hd,
                              wo_a + g * rank * per_group * kc::dtype_bytes(dtype_), rank, a_.grouped + g * rank,
                              groups * rank));
  DI_RETURN_IF_ERROR(linear(a_.grouped, L, groups * rank, groups * rank, w.wo_b, H, a_.out, H));

  const int64_t first = std::max(s, s + L - W);
  return kc::write_cache_rows(a_.kv + (first - s) * hd, hd, s + L - first, hd, seq.views[layout_.swa_kv], layer, first,
                              W, 0, stream_);
}

Status V4CudaModel::compress(const Seq& seq, const V4CudaCompressor& cw, int32_t entry_group, int32_t tl,
                             int32_t state_group, int64_t state_offset_floats) {
  const DeepseekV4Config& c = config_;
  const int64_t L = seq.L, s = seq.s, H = c.hidden_size, m = cw.rate, d = cw.dim;
  const int64_t width = cw.overlap ? 2 * d : d, ring = cw.overlap ? 2 * m : m;
  DI_RETURN_IF_ERROR(linear(a_.x, L, H, H, cw.wkv, width, a_.ckv, width));
  DI_RETURN_IF_ERROR(linear(a_.x, L, H, H, cw.wgate, width, a_.cgate, width));
  kc::CompressArgs args;
  args.kv = a_.ckv;
  args.gate = a_.cgate;
  args.ape = cw.ape;
  args.out = a_.entries;
  args.num_tokens = L;
  args.start_pos = s;
  args.dim = cw.dim;
  args.rate = cw.rate;
  args.overlap = cw.overlap;
  args.state = seq.views[state_group];
  args.state_layer = tl;
  args.state_offset = state_offset_floats * 4;
  DI_RETURN_IF_ERROR(kc::compress_windows(args, stream_));
  const int64_t first_win = s / m, windows = (s + L) / m - first_win;
  if (windows > 0) {
    const Rope& rope = ropes_.compress;
    DI_RETURN_IF_ERROR(kc::rms_norm(a_.entries, cw.norm, a_.entries, windows, 1, d, d,
                                    static_cast<float>(c.rms_norm_eps), DType::kF32, stream_));
    DI_RETURN_IF_ERROR(kc::rope_interleaved(a_.entries, windows, d, 1, d, d, first_win * m, m,
                                            inv_freq_compress_.as<const float>(), rope.dim(), rope.scale(), false,
                                            stream_));
    DI_RETURN_IF_ERROR(
        kc::write_cache_rows(a_.entries, d, windows, d, seq.views[entry_group], tl, first_win, 0, 0, stream_));
  }
  // The rows later windows still need, after the pooling above has read the old ones.
  const int64_t first = std::max(s, s + L - ring), n = s + L - first;
  const kc::CacheView& st = seq.views[state_group];
  DI_RETURN_IF_ERROR(kc::write_cache_rows(a_.ckv + (first - s) * width, width, n, width, st, tl, first, ring,
                                          state_offset_floats * 4, stream_));
  return kc::write_cache_rows(a_.cgate + (first - s) * width, width, n, width, st, tl, first, ring,
                              (state_offset_floats + width) * 4, stream_);
}

Status V4CudaModel::indexer(const Seq& seq, const V4CudaLayer& w, int32_t tl) {
  const DeepseekV4Config& c = config_;
  const int64_t L = seq.L, s = seq.s, nih = c.index_n_heads, ihd = c.index_head_dim, qlr = c.q_lora_rank;
  DI_RETURN_IF_ERROR(linear(a_.qr, L, qlr, qlr, w.index_wq_b, nih * ihd, a_.iq, nih * ihd));
  DI_RETURN_IF_ERROR(linear(a_.x, L, c.hidden_size, c.hidden_size, w.index_weights_proj, nih, a_.iw, nih));
  const Rope& rope = ropes_.compress;
  DI_RETURN_IF_ERROR(kc::rope_interleaved(a_.iq, L, nih * ihd, nih, ihd, ihd, s, 1, inv_freq_compress_.as<const float>(),
                                          rope.dim(), rope.scale(), false, stream_));
  kc::IndexerArgs args;
  args.q = a_.iq;
  args.weights = a_.iw;
  args.keys = seq.views[layout_.csa_index_keys];
  args.key_layer = tl;
  args.num_tokens = L;
  args.start_pos = s;
  args.heads = static_cast<int32_t>(nih);
  args.head_dim = static_cast<int32_t>(ihd);
  args.rate = c.compress_rate_csa;
  args.topk = c.index_topk;
  args.softmax_scale = 1.0f / std::sqrt(static_cast<float>(ihd));
  args.weight_scale = 1.0f / std::sqrt(static_cast<float>(nih));
  args.scores = a_.scores;
  args.max_visible = (s + L) / c.compress_rate_csa;
  args.selected = a_.selected;
  args.count = a_.count;
  return kc::indexer_topk(args, stream_);
}

Status V4CudaModel::moe(const Seq& seq, int32_t layer) {
  const DeepseekV4Config& c = config_;
  const V4CudaLayer& w = layers_[layer];
  const int64_t L = seq.L, H = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok,
                I = c.moe_intermediate_size;
  const float limit = static_cast<float>(c.swiglu_limit);
  const bool hash = c.mlp_layer_types[layer] == MlpType::kHashMoe;
  DI_RETURN_IF_ERROR(linear(a_.x, L, H, H, w.gate, E, a_.rlogits, E));
  kc::RoutingArgs r;
  r.logits = a_.rlogits;
  r.rows = L;
  r.experts = static_cast<int32_t>(E);
  r.top_k = static_cast<int32_t>(K);
  r.score = c.scoring_func == ScoringFunc::kSqrtSoftplus ? kc::RouterScore::kSqrtSoftplus
            : c.scoring_func == ScoringFunc::kSigmoid    ? kc::RouterScore::kSigmoid
                                                         : kc::RouterScore::kSoftmax;
  r.bias = hash ? nullptr : w.gate_bias;
  r.tid2eid = hash ? w.tid2eid : nullptr;
  r.tokens = seq.ids;
  r.routed_scaling = static_cast<float>(c.routed_scaling_factor);
  r.expert_ids = a_.eids;
  r.expert_weights = a_.ew;
  DI_RETURN_IF_ERROR(kc::moe_route(r, stream_));
  // The shared expert writes the output; routed experts add to it, in expert order as on the CPU.
  DI_RETURN_IF_ERROR(linear(a_.x, L, H, H, w.shared.w13, 2 * I, a_.gu, 2 * I));
  DI_RETURN_IF_ERROR(kc::clamped_swiglu(a_.gu, L, I, limit, a_.act, stream_));
  DI_RETURN_IF_ERROR(linear(a_.act, L, I, I, w.shared.w2, H, a_.out, H));

  // Which rows each expert takes: the routing comes back to the host (one sync per MoE layer).
  DI_ASSIGN_OR_RETURN(const std::vector<int64_t> count,
                      expert_rows_.group(a_.eids, a_.ew, L, K, E, a_.erows, a_.erow_weights, stream_, "deepseek_v4"));
  for (int64_t e = 0; e < E; ++e) {
    const V4CudaExpert& ex = w.experts[e];
    // A hash table may route a token to one expert twice: pieces of at most L rows each.
    for (int64_t off = count[e]; off < count[e + 1]; off += L) {
      const int64_t n = std::min(L, count[e + 1] - off);
      DI_RETURN_IF_ERROR(kc::gather_rows(a_.x, a_.erows + off, n, H, a_.gx, stream_));
      DI_RETURN_IF_ERROR(linear(a_.gx, n, H, H, ex.w13, 2 * I, a_.gu, 2 * I));
      DI_RETURN_IF_ERROR(kc::clamped_swiglu(a_.gu, n, I, limit, a_.act, stream_));
      DI_RETURN_IF_ERROR(linear(a_.act, n, I, I, ex.w2, H, a_.y, H));
      DI_RETURN_IF_ERROR(kc::scatter_add_rows(a_.y, a_.erows + off, a_.erow_weights + off, n, H, a_.out, stream_));
    }
  }
  return Status::ok();
}

}  // namespace di::engine::deepseek_v4

#endif  // DI_WITH_CUDA
