// V4CudaModel: the deepseek_v4 family on one CUDA GPU, op for op the CPU DeepseekV4Model (the
// reference it must match): the large matrices in the checkpoint's dtype (fp32 or bf16, fp32
// accumulation; DeepSeek's fp8 projections as shipped and its fp4 experts re-encoded to fp8, see
// DeviceLinear), activations, mHC streams, norms and caches in fp32. Every op runs once for all
// rows of a step (prefill chunks and decode tokens of many sequences, through a TokenBatch);
// decode steps of few tokens, and speculative decoding's verify steps (a short run per sequence
// with a logits row per token), route their experts on the device and replay as CUDA graphs
// (padded row and sequence buckets); larger steps group their experts on the host (one sync per
// MoE layer) and run one cuBLAS GEMM per expert. The MTP layer drafts with its passes in graphs
// too (propose_drafts; greedy decode steps verify and draft on the device, verify_greedy).
// CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/cuda/device_model.h"
#include "engine/model/cuda/device_weights.h"
#include "engine/model/cuda/expert_id_check.h"
#include "engine/model/cuda/expert_rows.h"
#include "engine/model/cuda/graph_cache.h"
#include "engine/model/cuda/step_batch.h"
#include "engine/model/cuda/stream_timer.h"
#include "engine/model/deepseek_v4/attention.h"
#include "engine/model/deepseek_v4/chunk.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {

// Step shapes shared by the forward (v4_cuda_model.cpp) and the MTP passes (v4_cuda_mtp.cpp).
namespace v4_cuda {
inline constexpr int64_t kGroupedPairsMax = 2048;  // (row, expert) pairs up to which experts are grouped on the device
// Verify steps (k + 1 tokens per sequence, k + 1 <= kVerifyGraphMaxTokens) and MTP passes replay
// graphs as decode steps do; false runs verify steps eagerly (the switch to flip if a graph ever
// disagrees with the eager step).
inline constexpr bool kVerifyGraphs = true;
inline constexpr int64_t kVerifyGraphMaxTokens = 16;
}  // namespace v4_cuda

// Device copies of one layer's tensors. `void*` ones are in the model dtype, `float*` ones fp32;
// DeviceLinears are the projections a checkpoint may ship in fp8 / fp4.
struct V4CudaCompressor {
  const void* wkv = nullptr;
  const void* wgate = nullptr;
  const float* ape = nullptr;
  const float* norm = nullptr;
  int32_t dim = 0;
  int32_t rate = 0;
  bool overlap = false;
};

struct V4CudaExpert {
  cuda::DeviceLinear w13;  // [2 inter, hidden]: w1 (gate) then w3 (up)
  cuda::DeviceLinear w2;   // [hidden, inter]
};

struct V4CudaHc {
  const float* fn = nullptr;
  const float* base = nullptr;
  const float* scale = nullptr;
};

struct V4CudaLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  V4CudaHc hc_attn, hc_ffn;
  cuda::DeviceLinear wq_a;
  const float* q_norm = nullptr;
  cuda::DeviceLinear wq_b;
  cuda::DeviceLinear wkv;
  const float* kv_norm = nullptr;
  cuda::DeviceLinear wo_a;
  cuda::DeviceLinear wo_b;
  const float* sinks = nullptr;
  V4CudaCompressor compressor, indexer;
  cuda::DeviceLinear index_wq_b;
  const void* index_weights_proj = nullptr;
  const void* gate = nullptr;
  const float* gate_bias = nullptr;   // score-top-k layers
  const int32_t* tid2eid = nullptr;  // hash layers
  std::vector<V4CudaExpert> experts;
  V4CudaExpert shared;
  const void* const* w13_table = nullptr;  // device [experts] of the experts' w13 / w2 pointers
  const void* const* w2_table = nullptr;
  const float* const* w13_scale_table = nullptr;  // fp8 experts: their scales
  const float* const* w2_scale_table = nullptr;
};

// The MTP layer's own tensors besides its decoder block (layers_ holds the block after the
// main layers).
struct V4CudaMtp {
  cuda::DeviceLinear e_proj;  // over enorm(embed(next token))
  cuda::DeviceLinear h_proj;  // over hnorm(each main stream)
  const float* enorm = nullptr;
  const float* hnorm = nullptr;
  const float* norm = nullptr;
  V4CudaHc head;
};

class V4CudaModel final : public cuda::DeviceModel {
 public:
  // Uploads `host` (as load_weights returned it) in the checkpoint's dtype, then drops it.
  static Result<std::unique_ptr<Model>> load(const std::string& model_dir, DeepseekV4Config config,
                                             std::unique_ptr<DeepseekV4Weights> host, const ModelOptions& options);
  // A model of `config`'s shape with random weights drawn on the device from `seed` (benchmarks:
  // no checkpoint, no host copies). Hash layers get a random tid2eid table. With `fp8_weights`
  // the projections are e4m3 as DeepSeek ships them (128 x 128 scales; routed experts with the
  // 1 x 128 scales their fp4 re-encoding gives).
  static Result<std::unique_ptr<V4CudaModel>> random(DeepseekV4Config config, kernels::cuda::DType dtype,
                                                     uint64_t seed, const ModelOptions& options,
                                                     bool fp8_weights = false);
  ~V4CudaModel() override;

  Result<float*> enqueue_forward(const ForwardBatch& batch, int64_t* rows) override;
  Status check_forward() override;
  // Speculative decoding with the checkpoint's MTP layer 0, as DeepseekV4Model does it: the
  // block runs on the device over each input's known positions (its ring rows in the swa_kv
  // group's layer num_hidden_layers), then one eager step per draft token for the inputs still
  // drafting; each step's logits rows (one per drafting input) come to the host for the chooser.
  // The draft steps' ring rows are saved and put back on the device.
  Status drafts_supported() const override;
  Status propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) override;
  // The one-wait speculative decode step (v4_cuda_spec_step.cpp): the forward (a CUDA graph for
  // decode-sized steps), the greedy draws of its rows, the accepted prefixes
  // (kernels/cuda/spec_accept.h) and the MTP pass over every fed row with those next tokens, all
  // enqueued on the stream, then the draws, accepted counts and first draft picks in one copy.
  bool verifies_on_device() const override { return has_mtp_; }
  Status verify_greedy(const ForwardBatch& batch, std::span<GreedyVerify> seqs) override;
  Status extend_drafts(std::span<const DraftInput> inputs, std::span<const int32_t> first,
                       DraftChooser& chooser) override;
  double last_draft_pass_seconds() const override { return draft_pass_timer_.seconds(); }
  int64_t weight_bytes() const { return weights_.bytes(); }
  const DeepseekV4Config& config() const { return config_; }

 private:
  V4CudaModel(DeepseekV4Config config, kernels::cuda::DType dtype, const ModelOptions& options, std::string model_dir);
  Status init_device();
  Status upload(const DeepseekV4Weights& host);
  Status randomize(uint64_t seed, bool fp8_weights);
  Status build_expert_tables();
  // Workspaces for `rows` rows, contexts up to `max_end` tokens and `logit_rows` logits rows;
  // sets *moved when they had to be reallocated.
  Status reserve(int64_t rows, int64_t max_end, int64_t logit_rows, bool* moved);
  // The whole forward over the uploaded StepBatch, into logits_dev_ (capturable when `grouped_moe`).
  Status run_step(bool grouped_moe);
  // Copies the final streams of the batch's keep_hidden sequences into kept_.
  Status keep_hidden(const ForwardBatch& batch);
  // Decoder block `l` over the step's rows (l == num_hidden_layers: the MTP layer's).
  Status run_layer(int32_t l, bool grouped_moe);
  AttnType attn_type(int32_t l) const {
    return l < config_.num_hidden_layers ? config_.layer_types[l] : AttnType::kSliding;
  }
  // The MTP layer over the packed step: `hidden` [rows, hc, hidden] are the streams it reads
  // (the main model's, or the previous draft step's), the step's token ids the next tokens. Leaves
  // its output streams in a_.streams and the logits of the step's logits rows in logits_dev_.
  Status run_mtp(const float* hidden);
  // One pass of the MTP layer over `batch` (an input's positions, their next tokens as ids) in
  // mtp_step_: `fill`, enqueued after the step's upload, writes the input streams of the step's
  // rows to m_.gathered, in step order (and may rewrite the uploaded ids). Passes of few tokens a
  // sequence replay CUDA graphs (*all_rows: then a logits row per token, else one per sequence,
  // unless `every_row`). Nothing waits for the device.
  Status mtp_pass(ForwardBatch& batch, const std::vector<CacheGroupSpec>& groups, const std::function<Status()>& fill,
                  bool every_row, bool* all_rows);
  // The cache groups an MTP pass checks for room: only swa_kv, the one its layer reads and writes.
  std::vector<CacheGroupSpec> mtp_groups() const;
  // Draft steps 1.. past each input's known positions, from token[s] (-1: none) and the streams
  // of its last known position in m_.drafts; steps[s] of them at most. The MTP ring rows they
  // write are saved first and put back.
  Status run_draft_steps(std::span<const DraftInput> inputs, const std::vector<int32_t>& steps, int64_t max_steps,
                         std::vector<int32_t>& token, DraftChooser& chooser);
  // The MTP pass's scratch (gathered streams, normed streams, embeddings) for `rows` rows; its
  // layout depends on `rows` only, so a graph's pointers hold for its key.
  Status reserve_mtp(int64_t rows);
  // A propose_drafts() call's state: each input's draft streams and the saved ring rows.
  Status reserve_draft_state(int64_t seqs, int64_t saved_rows);
  Status hc_pre(const V4CudaHc& hc);
  // The hc sites' mixing logits into a_.mixes: kc::hc_mix for few rows, a GEMM otherwise; returns
  // how many partial sums hc_pre / hc_head add.
  Result<int32_t> mix_logits(const float* streams, int64_t rows, int64_t width, const float* fn, int64_t out);
  // RMSNorm of rows of x in place; with bf16 weights also its bf16 copy into x16 (the operand of
  // every projection that reads x).
  Status norm_staged(float* x, const float* weight, void* x16, int64_t rows, int64_t dim);
  // y [rows, N] = x W^T with x as staged by norm_staged (x16 for bf16 weights, x for fp32).
  Status proj(const float* x, const void* x16, int64_t rows, int64_t K, const void* w, int64_t N, float* y);
  Status proj(const float* x, const void* x16, int64_t rows, const cuda::DeviceLinear& w, float* y) {
    return project(w, x, w.in, x16, rows, y, w.out);
  }
  Status attention(int32_t layer);
  // Every projection of a layer's normed input x (queries' down projection, kv, the compressors'
  // kv and gates, the indexer's head weights), one launch at decode's few rows.
  Status project_x(const V4CudaLayer& w, AttnType type);
  // The compressor's step over its projected rows [rows, kv width | gate width].
  Status compress(const V4CudaCompressor& cw, const float* kv_gate, int32_t entry_group, int32_t type_layer,
                  int32_t state_group, int64_t state_offset_floats);
  Status indexer(const V4CudaLayer& w, int32_t type_layer);
  Status moe(int32_t layer, bool grouped);
  Status moe_routed_grouped(const V4CudaLayer& w);
  Status moe_routed_by_expert(const V4CudaLayer& w);
  Status head(const V4CudaHc& hc_head, const float* norm);

  DeepseekV4Config config_;
  CacheLayout layout_;
  Ropes ropes_;
  bool enforce_eager_ = false;

  cuda::DeviceWeights weights_;
  const void* embed_ = nullptr;
  const void* head_ = nullptr;
  const float* norm_ = nullptr;
  V4CudaHc hc_head_;
  std::vector<V4CudaLayer> layers_;
  kernels::cuda::DeviceBuffer inv_freq_main_, inv_freq_compress_, expert_tables_;

  cuda::StepBatch step_;      // the forward's rows
  cuda::StepBatch mtp_step_;  // the MTP passes' (a pass may be enqueued while the forward's upload is pending)
  cuda::StepBatch* cur_ = &step_;  // the one the kernels of the running pass read
  int64_t rows_ = 0, max_end_ = 0, logit_rows_ = 0;  // what the workspaces are carved for
  int64_t max_visible_ = 0, grouped_pairs_ = 0;
  int32_t splits_ = 1;
  kernels::cuda::DeviceBuffer act_, logits_dev_;
  cuda::ExpertIdCheck bad_id_;
  cuda::ExpertRows expert_rows_;
  struct Act {
    float *streams, *mixes, *post, *comb, *x, *out, *qr, *q, *kv, *attn, *grouped;
    float *ckv, *iq, *iw, *scores, *partial, *rlogits, *ew, *gx, *gu, *act, *y, *erow_weights;
    float *pair_act, *pair_y, *head_streams;
    float* ickv;  // the indexer's compressor rows [kv | gate] (ckv: the attention's)
    float *x16, *qr16;  // x and qr rounded to bf16 by their norms: the GEMM operand, staged once
    float *gx16, *act16;  // bf16 storage: routed pairs' rows and one expert's activation (bf16 models)
    int32_t *selected, *count, *eids, *erows, *offsets, *slot_pair;
  } a_{};
  cuda::GraphCache graphs_;  // decode steps by (rows, context bucket)

  // Speculative decoding.
  bool has_mtp_ = false;
  std::string mtp_unavailable_;
  V4CudaMtp mtp_;
  kernels::cuda::DeviceBuffer kept_;  // the last forward's final streams [rows, hc, hidden]
  std::vector<int64_t> kept_row0_;    // per batch index: its first row in kept_, -1 when not kept
  std::vector<int64_t> kept_rows_;    // and its number of rows
  kernels::cuda::DeviceBuffer mtp_ws_, mtp_state_;
  struct MtpScratch {
    float *gathered, *normed, *embed, *drafts, *saved;
  } m_{};
  std::vector<float> draft_logits_;  // host rows for the chooser
  // verify_greedy: the first draft picks' sampler (in flight beside sampler_'s verify draws),
  // the accepted counts on the device and in pinned memory, and the step's specs.
  cuda::DeviceSampler draft_sampler_;
  kernels::cuda::DeviceBuffer accepted_dev_;
  cuda::PinnedBuffer accepted_host_;
  std::vector<SampleSpec> verify_specs_, draft_specs_;
  std::vector<Result<SampledToken>> verify_drawn_, draft_drawn_;
  cuda::StreamTimer draft_pass_timer_;  // the MTP pass and draft picks of the last verify_greedy
};

}  // namespace di::engine::deepseek_v4

#endif  // DI_WITH_CUDA
