// LlamaCudaModel: weight upload, the per-forward metadata and the layer loop on the GPU. See
// llama_cuda_model.h. The op order and rounding points follow the CPU model and transformers:
// residual stream, norms and projections stored in the model dtype, fp32 math inside each op.
#ifdef DI_WITH_CUDA

#include "engine/model/llama/llama_cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model/batch_check.h"
#include "engine/model/cuda/device_weights.h"
#include "engine/model/cuda/graph_buckets.h"
#include "engine/model/weight_loader.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/decode_attention.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/flash_attention.h"
#include "kernels/cuda/paged_attention.h"

namespace di::engine::llama {
namespace kc = di::kernels::cuda;
using kc::DType;

namespace {

constexpr int32_t kKvGroup = 0;
constexpr int32_t kFlashMinTokens = 16;  // fewer new tokens: the general kernel wastes less
constexpr int32_t kSplitMaxTokens = 4;   // up to this many new tokens: one split-KV row each
// Batch-invariant mode: every row (prefill or decode) is a split-KV tile over chunks of this many
// keys, and one launch takes at most kInvariantWorkspace bytes of partial softmaxes.
constexpr int64_t kInvariantChunk = 256;
constexpr int64_t kInvariantWorkspace = int64_t{64} << 20;
constexpr int64_t kActivationReserve = int64_t{3} << 30;  // workspaces besides the KV cache

// Copies a checkpoint tensor into device memory of `dtype` at `dst`.
Status upload_tensor(const TensorView& t, DType dtype, void* dst) {
  const int64_t n = t.numel();
  if ((dtype == DType::kF32 && t.dtype == engine::DType::kF32) ||
      (dtype == DType::kBF16 && t.dtype == engine::DType::kBF16))
    return kc::copy_to_device(dst, t.data, t.nbytes);
  DI_ASSIGN_OR_RETURN(std::vector<float> f, tensor_to_f32(t));
  if (dtype == DType::kF32) return kc::copy_to_device(dst, f.data(), n * 4);
  std::vector<uint16_t> h(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) h[i] = cuda::bf16_bits(f[i]);
  return kc::copy_to_device(dst, h.data(), n * 2);
}

template <typename T>
T* carve(uint8_t*& p, int64_t count) {
  T* out = reinterpret_cast<T*>(p);
  p += (count * static_cast<int64_t>(sizeof(T)) + 255) / 256 * 256;
  return out;
}

}  // namespace

LlamaCudaModel::LlamaCudaModel(LlamaConfig config, DType dtype, const ModelOptions& options, std::string model_dir)
    : DeviceModel(dtype, options, kActivationReserve),
      config_(std::move(config)),
      rope_(config_.rope, RopeLayout::kHalf),
      enforce_eager_(options.enforce_eager) {
  const LlamaConfig& c = config_;
  set_info(c.model_type, std::move(model_dir), c);
  const int64_t kv_width = int64_t{c.num_key_value_heads} * c.head_dim;
  groups_.push_back({"kv", CacheKind::kFull, c.num_hidden_layers, 2 * kv_width * kc::dtype_bytes(dtype), 0, 1, 0});
}

// The graphs go before the base class destroys the stream they were captured on.
LlamaCudaModel::~LlamaCudaModel() = default;

Status LlamaCudaModel::init_device() {
  DI_RETURN_IF_ERROR(open_stream());
  return upload_f32(rope_.inv_freq(), inv_freq_);
}

Result<void*> LlamaCudaModel::alloc_weight(int64_t elements) {
  kc::DeviceBuffer b;
  const int64_t bytes = elements * kc::dtype_bytes(dtype_);
  DI_RETURN_IF_ERROR(b.allocate(bytes));
  weight_bytes_ += bytes;
  void* p = b.get();
  weights_.push_back(std::move(b));
  return p;
}

Status LlamaCudaModel::load_weights(const std::string& model_dir) {
  const LlamaConfig& c = config_;
  WeightStore store;
  DI_ASSIGN_OR_RETURN(store.checkpoint, Checkpoint::open(model_dir));
  WeightLoader w(store, c.model_type);
  const int64_t H = c.hidden_size, hd = c.head_dim, q = int64_t{c.num_attention_heads} * hd,
                kv = int64_t{c.num_key_value_heads} * hd, I = c.intermediate_size, V = c.vocab_size;
  const int64_t eb = kc::dtype_bytes(dtype_);
  // One tensor into device memory at `dst` (offset into a fused buffer).
  auto put = [&](const std::string& name, std::vector<int64_t> shape, void* dst) -> Status {
    DI_ASSIGN_OR_RETURN(const TensorView* t, w.tensor({name}, shape));
    return upload_tensor(*t, dtype_, dst);
  };
  auto single = [&](const std::string& name, std::vector<int64_t> shape) -> Result<const void*> {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    DI_ASSIGN_OR_RETURN(void* p, alloc_weight(n));
    DI_RETURN_IF_ERROR(put(name, shape, p));
    return static_cast<const void*>(p);
  };
  DI_ASSIGN_OR_RETURN(embed_, single("model.embed_tokens.weight", {V, H}));
  DI_ASSIGN_OR_RETURN(norm_, single("model.norm.weight", {H}));
  if (c.tie_word_embeddings) {
    if (!w.pick({"lm_head.weight"}).empty()) DI_RETURN_IF_ERROR(w.tensor({"lm_head.weight"}, {V, H}).status());
    lm_head_ = embed_;
  } else {
    DI_ASSIGN_OR_RETURN(lm_head_, single("lm_head.weight", {V, H}));
  }
  layers_.resize(c.num_hidden_layers);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LlamaCudaLayer& L = layers_[l];
    DI_ASSIGN_OR_RETURN(L.input_layernorm, single(p + "input_layernorm.weight", {H}));
    DI_ASSIGN_OR_RETURN(L.post_attention_layernorm, single(p + "post_attention_layernorm.weight", {H}));
    DI_ASSIGN_OR_RETURN(void* qkv, alloc_weight((q + 2 * kv) * H));
    auto* b = static_cast<uint8_t*>(qkv);
    DI_RETURN_IF_ERROR(put(p + "self_attn.q_proj.weight", {q, H}, b));
    DI_RETURN_IF_ERROR(put(p + "self_attn.k_proj.weight", {kv, H}, b + q * H * eb));
    DI_RETURN_IF_ERROR(put(p + "self_attn.v_proj.weight", {kv, H}, b + (q + kv) * H * eb));
    L.qkv = qkv;
    if (c.qkv_bias) {
      DI_ASSIGN_OR_RETURN(void* qb, alloc_weight(q + 2 * kv));
      auto* bb = static_cast<uint8_t*>(qb);
      DI_RETURN_IF_ERROR(put(p + "self_attn.q_proj.bias", {q}, bb));
      DI_RETURN_IF_ERROR(put(p + "self_attn.k_proj.bias", {kv}, bb + q * eb));
      DI_RETURN_IF_ERROR(put(p + "self_attn.v_proj.bias", {kv}, bb + (q + kv) * eb));
      L.qkv_bias = qb;
    }
    DI_ASSIGN_OR_RETURN(L.o_proj, single(p + "self_attn.o_proj.weight", {H, q}));
    if (c.o_bias) {
      DI_ASSIGN_OR_RETURN(L.o_bias, single(p + "self_attn.o_proj.bias", {H}));
    }
    if (c.qk_norm) {
      DI_ASSIGN_OR_RETURN(L.q_norm, single(p + "self_attn.q_norm.weight", {hd}));
      DI_ASSIGN_OR_RETURN(L.k_norm, single(p + "self_attn.k_norm.weight", {hd}));
    }
    DI_ASSIGN_OR_RETURN(void* gu, alloc_weight(2 * I * H));
    DI_RETURN_IF_ERROR(put(p + "mlp.gate_proj.weight", {I, H}, gu));
    DI_RETURN_IF_ERROR(put(p + "mlp.up_proj.weight", {I, H}, static_cast<uint8_t*>(gu) + I * H * eb));
    L.gate_up = gu;
    if (c.mlp_bias) {
      DI_ASSIGN_OR_RETURN(void* gb, alloc_weight(2 * I));
      DI_RETURN_IF_ERROR(put(p + "mlp.gate_proj.bias", {I}, gb));
      DI_RETURN_IF_ERROR(put(p + "mlp.up_proj.bias", {I}, static_cast<uint8_t*>(gb) + I * eb));
      L.gate_up_bias = gb;
    }
    DI_ASSIGN_OR_RETURN(L.down_proj, single(p + "mlp.down_proj.weight", {H, I}));
    if (c.mlp_bias) {
      DI_ASSIGN_OR_RETURN(L.down_bias, single(p + "mlp.down_proj.bias", {H}));
    }
  }
  return w.check_all_taken();
}

Status LlamaCudaModel::random_weights(uint64_t seed) {
  const LlamaConfig& c = config_;
  const int64_t H = c.hidden_size, hd = c.head_dim, q = int64_t{c.num_attention_heads} * hd,
                kv = int64_t{c.num_key_value_heads} * hd, I = c.intermediate_size, V = c.vocab_size;
  uint64_t k = seed;
  auto make = [&](int64_t n, float scale, float offset) -> Result<const void*> {
    DI_ASSIGN_OR_RETURN(void* p, alloc_weight(n));
    DI_RETURN_IF_ERROR(kc::fill_uniform(p, n, offset, scale, ++k, dtype_, stream_));
    return static_cast<const void*>(p);
  };
  DI_ASSIGN_OR_RETURN(embed_, make(V * H, 1.f, 0.f));
  DI_ASSIGN_OR_RETURN(norm_, make(H, 0.1f, 1.f));
  if (c.tie_word_embeddings) {
    lm_head_ = embed_;
  } else {
    DI_ASSIGN_OR_RETURN(lm_head_, make(V * H, 1.f / std::sqrt(float(H)), 0.f));
  }
  layers_.resize(c.num_hidden_layers);
  for (LlamaCudaLayer& L : layers_) {
    DI_ASSIGN_OR_RETURN(L.input_layernorm, make(H, 0.1f, 1.f));
    DI_ASSIGN_OR_RETURN(L.post_attention_layernorm, make(H, 0.1f, 1.f));
    DI_ASSIGN_OR_RETURN(L.qkv, make((q + 2 * kv) * H, 1.f / std::sqrt(float(H)), 0.f));
    if (c.qkv_bias) {
      DI_ASSIGN_OR_RETURN(L.qkv_bias, make(q + 2 * kv, 0.1f, 0.f));
    }
    DI_ASSIGN_OR_RETURN(L.o_proj, make(H * q, 1.f / std::sqrt(float(q)), 0.f));
    if (c.o_bias) {
      DI_ASSIGN_OR_RETURN(L.o_bias, make(H, 0.1f, 0.f));
    }
    if (c.qk_norm) {
      DI_ASSIGN_OR_RETURN(L.q_norm, make(hd, 0.1f, 1.f));
      DI_ASSIGN_OR_RETURN(L.k_norm, make(hd, 0.1f, 1.f));
    }
    DI_ASSIGN_OR_RETURN(L.gate_up, make(2 * I * H, 1.f / std::sqrt(float(H)), 0.f));
    if (c.mlp_bias) {
      DI_ASSIGN_OR_RETURN(L.gate_up_bias, make(2 * I, 0.1f, 0.f));
    }
    DI_ASSIGN_OR_RETURN(L.down_proj, make(H * I, 1.f / std::sqrt(float(I)), 0.f));
    if (c.mlp_bias) {
      DI_ASSIGN_OR_RETURN(L.down_bias, make(H, 0.1f, 0.f));
    }
  }
  return kc::stream_synchronize(stream_);
}

Result<std::unique_ptr<Model>> LlamaCudaModel::load(const std::string& model_dir, const LlamaConfig& config,
                                                    const ModelOptions& options) {
  WeightStore probe;
  DI_ASSIGN_OR_RETURN(probe.checkpoint, Checkpoint::open(model_dir));
  const TensorView* e = probe.checkpoint->find("model.embed_tokens.weight");
  const DType dtype = e && e->dtype == engine::DType::kF32 ? DType::kF32 : DType::kBF16;
  std::unique_ptr<LlamaCudaModel> m(new LlamaCudaModel(config, dtype, options, model_dir));
  DI_RETURN_IF_ERROR(m->check_memory(*probe.checkpoint, config.num_hidden_layers, false));
  probe.checkpoint.reset();
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->load_weights(model_dir));
  return std::unique_ptr<Model>(std::move(m));
}

Result<std::unique_ptr<LlamaCudaModel>> LlamaCudaModel::random(const LlamaConfig& config, DType dtype, uint64_t seed,
                                                               const ModelOptions& options) {
  std::unique_ptr<LlamaCudaModel> m(new LlamaCudaModel(config, dtype, options, ""));
  DI_RETURN_IF_ERROR(m->init_device());
  DI_RETURN_IF_ERROR(m->random_weights(seed));
  return m;
}

Result<float*> LlamaCudaModel::enqueue_forward(const ForwardBatch& batch, int64_t* rows_out) {
  const LlamaConfig& c = config_;
  DI_ASSIGN_OR_RETURN(int64_t out_rows, check_batch(batch, c.vocab_size, c.max_position_embeddings));
  *rows_out = out_rows;
  const kc::AttentionShape shape{c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                                 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  // Host metadata: ids, positions, row -> sequence, cache views, block tables, tiles and the
  // rows whose logits are wanted; packed and uploaded in one copy.
  std::vector<int32_t> ids, row_seq, tables, logit_rows;
  std::vector<int64_t> positions, table_start;  // table_start[s]: sequence s's first block in `tables`
  std::vector<kernels::CacheView> seqs;
  std::vector<kc::AttentionTile> tiles, flash_tiles, decode_tiles;
  // Batch-invariant mode: every row through the split-KV kernel, so a prompt's rows take the
  // path its decode steps take, whatever the chunking or the batch.
  const bool flash = !deterministic_ && kc::flash_attention_supports(shape, dtype_);
  // Head dims below 32 take the general kernel for decode rows unless batch-invariant (where
  // every row must take the split-KV one).
  const bool split_decode = kc::decode_attention_supports(shape) && (deterministic_ || c.head_dim % 32 == 0);
  const int32_t split_max_tokens = deterministic_ ? INT32_MAX : kSplitMaxTokens;
  int64_t max_context = 0;
  int64_t rows = 0;
  bool decode_only = true;  // no sequence past kSplitMaxTokens new tokens: a step worth a graph
  for (size_t s = 0; s < batch.seqs.size(); ++s) {
    const SequenceInput& in = batch.seqs[s];
    kernels::CacheView v;
    if (!in.cache->paged_view(kKvGroup, &v) || !v.on_device)
      return Status::invalid_argument("seqs[" + std::to_string(s) +
                                      "].cache: the CUDA model needs a paged cache in device memory");
    const int64_t end = in.start_pos + in.num_tokens;
    if (v.num_blocks * v.block_size < end)
      return Status::invalid_argument("seqs[" + std::to_string(s) + "].cache: " + std::to_string(v.num_blocks) +
                                      " blocks cannot hold " + std::to_string(end) + " tokens");
    if (end > INT32_MAX) return Status::invalid_argument("seqs[" + std::to_string(s) + "]: position too large");
    const int64_t used_blocks = (end + v.block_size - 1) / v.block_size;
    table_start.push_back(static_cast<int64_t>(tables.size()));
    tables.insert(tables.end(), v.block_ids, v.block_ids + used_blocks);
    v.num_blocks = used_blocks;
    seqs.push_back(v);  // block_ids: the host table until the packing below points it at the device copy
    decode_only &= in.num_tokens <= kSplitMaxTokens;
    // Prefill chunks go to the tensor-core kernel; decode rows (few tokens) to the general one.
    if (flash && in.num_tokens >= kFlashMinTokens) {
      kc::append_flash_tiles(static_cast<int32_t>(s), static_cast<int32_t>(rows), static_cast<int32_t>(in.start_pos),
                             in.num_tokens, flash_tiles);
    } else if (split_decode && in.num_tokens <= split_max_tokens) {
      // Decode: one split-KV tile per token.
      for (int32_t i = 0; i < in.num_tokens; ++i)
        decode_tiles.push_back({static_cast<int32_t>(s), static_cast<int32_t>(rows + i), 1,
                                static_cast<int32_t>(in.start_pos + i)});
      max_context = std::max<int64_t>(max_context, end);
    } else {
      kc::append_attention_tiles(shape, static_cast<int32_t>(s), static_cast<int32_t>(rows),
                                 static_cast<int32_t>(in.start_pos), in.num_tokens, tiles);
    }
    for (int32_t i = 0; i < in.num_tokens; ++i) {
      ids.push_back(in.tokens[i]);
      positions.push_back(in.start_pos + i);
      row_seq.push_back(static_cast<int32_t>(s));
      if (in.all_logits || i == in.num_tokens - 1) logit_rows.push_back(static_cast<int32_t>(rows + i));
    }
    rows += in.num_tokens;
  }
  if (static_cast<int64_t>(logit_rows.size()) != out_rows) return Status::internal("llama cuda: logits row count");

  // Pack the metadata: each array 256-byte aligned inside one buffer.
  auto aligned = [](int64_t b) { return (b + 255) / 256 * 256; };
  const int64_t meta_bytes = aligned(rows * 4) + aligned(rows * 8) + aligned(rows * 4) +
                             aligned(static_cast<int64_t>(seqs.size() * sizeof(kernels::CacheView))) +
                             aligned(static_cast<int64_t>(tables.size()) * 4) +
                             aligned(static_cast<int64_t>(tiles.size() * sizeof(kc::AttentionTile))) +
                             aligned(static_cast<int64_t>(flash_tiles.size() * sizeof(kc::AttentionTile))) +
                             aligned(static_cast<int64_t>(decode_tiles.size() * sizeof(kc::AttentionTile))) +
                             aligned(out_rows * 4);
  host_meta_.assign(static_cast<size_t>(meta_bytes), 0);
  if (meta_bytes > meta_.bytes()) DI_RETURN_IF_ERROR(meta_.allocate(std::max(meta_bytes, 2 * meta_.bytes())));
  {
    uint8_t* h = host_meta_.data();
    auto* dbase = meta_.as<uint8_t>();
    auto place = [&](const void* src, int64_t bytes) {
      const int64_t off = h - host_meta_.data();
      if (bytes > 0) std::memcpy(h, src, static_cast<size_t>(bytes));
      h += aligned(bytes);
      return static_cast<const void*>(dbase + off);
    };
    d_ids_ = place(ids.data(), rows * 4);
    d_positions_ = place(positions.data(), rows * 8);
    d_row_seq_ = place(row_seq.data(), rows * 4);
    auto* host_seqs = reinterpret_cast<kernels::CacheView*>(h);
    d_seqs_ = place(seqs.data(), static_cast<int64_t>(seqs.size() * sizeof(kernels::CacheView)));
    d_tiles_ = place(tiles.data(), static_cast<int64_t>(tiles.size() * sizeof(kc::AttentionTile)));
    d_flash_tiles_ = place(flash_tiles.data(), static_cast<int64_t>(flash_tiles.size() * sizeof(kc::AttentionTile)));
    d_decode_tiles_ = place(decode_tiles.data(), static_cast<int64_t>(decode_tiles.size() * sizeof(kc::AttentionTile)));
    d_logit_rows_ = place(logit_rows.data(), out_rows * 4);
    // Last: its length changes as contexts grow, and a captured graph needs every other
    // array at a fixed offset. The views point into it wherever it lands: they are data the
    // graph reads each step, not launch arguments.
    const auto* d_tables = static_cast<const int32_t*>(place(tables.data(), static_cast<int64_t>(tables.size()) * 4));
    for (size_t s = 0; s < seqs.size(); ++s) host_seqs[s].block_ids = d_tables + table_start[s];
  }
  DI_RETURN_IF_ERROR(kc::copy_to_device_async(meta_.get(), host_meta_.data(), meta_bytes, stream_));
  tiles_ = static_cast<int64_t>(tiles.size());
  flash_tiles_ = static_cast<int64_t>(flash_tiles.size());
  decode_tiles_ = static_cast<int64_t>(decode_tiles.size());
  // Contexts rounded up so that a captured decode graph serves many steps.
  decode_context_ = cuda::context_bucket(max_context);
  if (deterministic_) {
    decode_splits_ = static_cast<int32_t>(std::max<int64_t>(1, (decode_context_ + kInvariantChunk - 1) / kInvariantChunk));
  } else {
    decode_splits_ = decode_tiles.empty() ? 1
                                          : kc::decode_attention_splits(static_cast<int32_t>(decode_tiles.size()),
                                                                        decode_context_, shape);
  }
  logit_rows_ = out_rows;
  num_seqs_ = static_cast<int64_t>(seqs.size());
  DI_RETURN_IF_ERROR(reserve_activations(rows));
  const bool graphable =
      !enforce_eager_ && decode_only && tiles.empty() && flash_tiles.empty() && !decode_tiles.empty();
  if (graphable) {
    DI_RETURN_IF_ERROR(launch_graph(rows));
  } else {
    DI_RETURN_IF_ERROR(run_layers(rows));
  }
  return logits_.as<float>();
}

int64_t LlamaCudaModel::activation_bytes(int64_t T) const {
  const LlamaConfig& c = config_;
  const int64_t H = c.hidden_size, hd = c.head_dim, qw = int64_t{c.num_attention_heads} * hd,
                qkvw = qw + 2 * int64_t{c.num_key_value_heads} * hd, I = c.intermediate_size;
  const int64_t eb = kc::dtype_bytes(dtype_);
  const kc::AttentionShape shape{c.num_attention_heads, c.num_key_value_heads, c.head_dim, 1.f};
  const int64_t ws_bytes =
      kc::decode_attention_workspace_bytes(static_cast<int32_t>(decode_tiles_per_launch()), decode_splits_, shape);
  auto al = [](int64_t b) { return (b + 255) / 256 * 256; };
  // Residual x, normed h, projection out, qkv, attention out, gate_up, act, the gathered
  // logits rows, the split-KV workspace.
  return al(T * H * eb) * 3 + al(T * qkvw * eb) + al(T * qw * eb) + al(T * 2 * I * eb) + al(T * I * eb) +
         al(logit_rows_ * H * eb) + al(ws_bytes);
}

bool LlamaCudaModel::batch_invariance_supported() const {
  const LlamaConfig& c = config_;
  return kc::decode_attention_supports({c.num_attention_heads, c.num_key_value_heads, c.head_dim, 1.f});
}

int64_t LlamaCudaModel::decode_tiles_per_launch() const {
  if (!deterministic_ || decode_tiles_ == 0) return std::max<int64_t>(1, decode_tiles_);
  const kc::AttentionShape shape{config_.num_attention_heads, config_.num_key_value_heads, config_.head_dim, 1.f};
  const int64_t per_tile = kc::decode_attention_workspace_bytes(1, decode_splits_, shape);
  return std::clamp<int64_t>(kInvariantWorkspace / std::max<int64_t>(1, per_tile), 1, decode_tiles_);
}

Status LlamaCudaModel::reserve_activations(int64_t T) {
  const int64_t bytes = activation_bytes(T), lbytes = logit_rows_ * config_.vocab_size * 4;
  if (bytes > act_.bytes() || lbytes > logits_.bytes()) {
    graphs_.clear();  // they point into the buffers about to be replaced
    if (bytes > act_.bytes()) DI_RETURN_IF_ERROR(act_.allocate(std::max(bytes, act_.bytes() * 3 / 2)));
    if (lbytes > logits_.bytes()) DI_RETURN_IF_ERROR(logits_.allocate(std::max(lbytes, logits_.bytes() * 3 / 2)));
  }
  return Status::ok();
}

Status LlamaCudaModel::launch_graph(int64_t T) {
  const std::vector<int64_t> key{T, logit_rows_, decode_tiles_, decode_splits_, decode_context_, num_seqs_,
                                 static_cast<int64_t>(reinterpret_cast<uintptr_t>(meta_.get())),
                                 static_cast<int64_t>(reinterpret_cast<uintptr_t>(act_.get()))};
  return graphs_.launch(key, stream_, [&] { return run_layers(T); });
}

Status LlamaCudaModel::run_layers(int64_t T) {
  const LlamaConfig& c = config_;
  const int64_t H = c.hidden_size, hd = c.head_dim, nh = c.num_attention_heads, nkv = c.num_key_value_heads;
  const int64_t qw = nh * hd, kvw = nkv * hd, qkvw = qw + 2 * kvw, I = c.intermediate_size, V = c.vocab_size;
  const int64_t eb = kc::dtype_bytes(dtype_);
  const float eps = static_cast<float>(c.rms_norm_eps);
  const kc::AttentionShape shape{c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                                 1.0f / std::sqrt(static_cast<float>(hd))};
  const int64_t R = logit_rows_;
  const int64_t ws_bytes =
      kc::decode_attention_workspace_bytes(static_cast<int32_t>(decode_tiles_per_launch()), decode_splits_, shape);
  uint8_t* p = act_.as<uint8_t>();
  void* x = carve<uint8_t>(p, T * H * eb);
  void* h = carve<uint8_t>(p, T * H * eb);
  void* o = carve<uint8_t>(p, T * H * eb);
  auto* qkv = carve<uint8_t>(p, T * qkvw * eb);
  void* attn = carve<uint8_t>(p, T * qw * eb);
  void* gu = carve<uint8_t>(p, T * 2 * I * eb);
  void* act = carve<uint8_t>(p, T * I * eb);
  void* sel = carve<uint8_t>(p, R * H * eb);
  void* ws = carve<uint8_t>(p, ws_bytes);
  const auto* ids = static_cast<const int32_t*>(d_ids_);
  const auto* pos = static_cast<const int64_t*>(d_positions_);
  const auto* seqs = static_cast<const kernels::CacheView*>(d_seqs_);
  const auto* inv_freq = inv_freq_.as<const float>();
  void* s = stream_;

  DI_RETURN_IF_ERROR(kc::embedding(ids, T, embed_, H, x, dtype_, s));
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const LlamaCudaLayer& w = layers_[l];
    if (l == 0) {
      DI_RETURN_IF_ERROR(kc::rms_norm(x, w.input_layernorm, h, T, 1, H, H, eps, dtype_, s));
    } else {
      DI_RETURN_IF_ERROR(kc::add_rms_norm(x, o, w.input_layernorm, h, T, H, eps, dtype_, s));
    }
    DI_RETURN_IF_ERROR(gemm_.linear(h, T, H, H, w.qkv, qkvw, dtype_, qkv, qkvw, dtype_));
    DI_RETURN_IF_ERROR(kc::add_bias(qkv, w.qkv_bias, T, qkvw, qkvw, dtype_, s));
    uint8_t* k = qkv + qw * eb;
    uint8_t* v = qkv + (qw + kvw) * eb;
    if (c.qk_norm) {
      DI_RETURN_IF_ERROR(kc::rms_norm(qkv, w.q_norm, qkv, T, nh, hd, qkvw, eps, dtype_, s));
      DI_RETURN_IF_ERROR(kc::rms_norm(k, w.k_norm, k, T, nkv, hd, qkvw, eps, dtype_, s));
    }
    DI_RETURN_IF_ERROR(kc::rope_half(qkv, T, nh, hd, qkvw, pos, inv_freq, rope_.dim(), rope_.attention_scaling(),
                                     dtype_, s));
    DI_RETURN_IF_ERROR(kc::rope_half(k, T, nkv, hd, qkvw, pos, inv_freq, rope_.dim(), rope_.attention_scaling(),
                                     dtype_, s));
    DI_RETURN_IF_ERROR(kc::write_paged_kv(k, v, qkvw, T, static_cast<const int32_t*>(d_row_seq_), pos, seqs, l, shape,
                                          dtype_, s));
    DI_RETURN_IF_ERROR(kc::paged_attention(qkv, qkvw, attn, static_cast<const kc::AttentionTile*>(d_tiles_),
                                           static_cast<int32_t>(tiles_), seqs, l, shape, dtype_, s));
    DI_RETURN_IF_ERROR(kc::flash_attention(qkv, qkvw, attn, static_cast<const kc::AttentionTile*>(d_flash_tiles_),
                                           static_cast<int32_t>(flash_tiles_), seqs, l, shape, s));
    const int64_t per_launch = decode_tiles_per_launch();
    for (int64_t t0 = 0; t0 < decode_tiles_; t0 += per_launch) {
      DI_RETURN_IF_ERROR(kc::decode_attention(
          qkv, qkvw, attn, static_cast<const kc::AttentionTile*>(d_decode_tiles_) + t0,
          static_cast<int32_t>(std::min(per_launch, decode_tiles_ - t0)), decode_splits_, decode_context_,
          seqs, l, shape, ws, dtype_, s, deterministic_ ? kInvariantChunk : 0));
    }
    DI_RETURN_IF_ERROR(gemm_.linear(attn, T, qw, qw, w.o_proj, H, dtype_, o, H, dtype_));
    DI_RETURN_IF_ERROR(kc::add_bias(o, w.o_bias, T, H, H, dtype_, s));
    DI_RETURN_IF_ERROR(kc::add_rms_norm(x, o, w.post_attention_layernorm, h, T, H, eps, dtype_, s));
    DI_RETURN_IF_ERROR(gemm_.linear(h, T, H, H, w.gate_up, 2 * I, dtype_, gu, 2 * I, dtype_));
    DI_RETURN_IF_ERROR(kc::add_bias(gu, w.gate_up_bias, T, 2 * I, 2 * I, dtype_, s));
    DI_RETURN_IF_ERROR(kc::silu_and_mul(gu, T, I, act, dtype_, s));
    DI_RETURN_IF_ERROR(gemm_.linear(act, T, I, I, w.down_proj, H, dtype_, o, H, dtype_));
    DI_RETURN_IF_ERROR(kc::add_bias(o, w.down_bias, T, H, H, dtype_, s));
  }
  DI_RETURN_IF_ERROR(kc::add_rms_norm(x, o, norm_, h, T, H, eps, dtype_, s));
  // Only the rows whose logits are wanted go through the head (the gather reuses embedding).
  DI_RETURN_IF_ERROR(kc::embedding(static_cast<const int32_t*>(d_logit_rows_), R, h, H, sel, dtype_, s));
  return gemm_.linear(sel, R, H, H, lm_head_, V, dtype_, logits_.get(), V, DType::kF32);
}

}  // namespace di::engine::llama

#endif  // DI_WITH_CUDA
