// DeviceModel: see device_model.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/device_model.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "engine/model/batch_check.h"
#include "engine/model/cuda/graph_buckets.h"
#include "engine/model/cuda/workspace.h"
#include "engine/model/memory_plan.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/moe_experts.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;
using kc::DType;

DeviceModel::DeviceModel(DType dtype, const ModelOptions& options, int64_t activation_reserve)
    : dtype_(dtype),
      memory_(options.gpu_memory_utilization, activation_reserve, options.gpu_memory_limit_bytes),
      utilization_(options.gpu_memory_utilization),
      limit_bytes_(options.gpu_memory_limit_bytes),
      activation_reserve_(activation_reserve),
      fp8_activations_(options.fp8_activations) {}

DeviceModel::~DeviceModel() {
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Status DeviceModel::check_memory(const Checkpoint& checkpoint, int32_t num_hidden_layers, bool include_mtp) {
  if (kc::device_count() == 0) return Status::device("device 'cuda': no CUDA GPU is visible");
  const MemoryPlan plan = plan_device_weight_memory(checkpoint, num_hidden_layers, include_mtp, dtype_ == DType::kBF16);
  int64_t free_b = 0, total_b = 0;
  DI_RETURN_IF_ERROR(kc::device_memory(&free_b, &total_b));
  DI_RETURN_IF_ERROR(check_device_fits(plan, device_weight_budget(free_b, total_b, utilization_, limit_bytes_),
                                       activation_reserve_));
  memory_.set_weight_bytes(plan.total_bytes);
  return Status::ok();
}

Status DeviceModel::check_at_most(const char* field, int64_t value, int64_t limit) {
  if (value <= limit) return Status::ok();
  return Status::unsupported("device 'cuda': " + std::string(field) + " " + std::to_string(value) + " is above " +
                             std::to_string(limit));
}

Status DeviceModel::open_stream() {
  if (kc::device_count() == 0) return Status::device("device 'cuda': no CUDA GPU is visible");
  cudaStream_t s = nullptr;
  DI_RETURN_IF_ERROR(kc::cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  stream_ = s;
  memory_.set_stream(stream_);
  DI_ASSIGN_OR_RETURN(gemm_, kc::Gemm::create(stream_));
  DI_ASSIGN_OR_RETURN(fp8_gemm_, kc::Fp8Gemm::create(stream_));
  return Status::ok();
}

bool DeviceModel::enable_batch_invariance() {
  if (!stream_ || !batch_invariance_supported() || !gemm_.set_batch_invariant(true).is_ok()) return false;
  deterministic_ = true;
  return true;
}

Status DeviceModel::upload_f32(const std::vector<float>& host, kc::DeviceBuffer& buf) {
  const int64_t bytes = static_cast<int64_t>(host.size() * 4);
  DI_RETURN_IF_ERROR(buf.allocate(bytes));
  return kc::copy_to_device(buf.get(), host.data(), bytes);
}

Result<const void* const*> DeviceModel::upload_table(const std::vector<const void*>& host, kc::DeviceBuffer& buf) {
  const int64_t bytes = static_cast<int64_t>(host.size() * sizeof(void*));
  DI_RETURN_IF_ERROR(buf.allocate(bytes));
  DI_RETURN_IF_ERROR(kc::copy_to_device(buf.get(), host.data(), bytes));
  return buf.as<const void* const>();
}

Status DeviceModel::linear(const float* x, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y,
                           int64_t ldy) {
  if (dtype_ == DType::kF32) return gemm_.linear(x, M, K, ldx, w, N, DType::kF32, y, ldy, DType::kF32);
  // Decode's few rows round x to bf16 as they load it (no staging launch), unless every product
  // must take the batch-invariant kernel.
  if (gemm_.skinny_rows() && kc::gemv_fits(M, K, ldx, x, w))
    return kc::gemv_bf16(x, DType::kF32, M, K, ldx, w, N, y, ldy, 0.f, stream_);
  // bf16 weights: the activations are rounded to bf16 for the tensor cores, the sum stays fp32.
  DI_RETURN_IF_ERROR(kc::convert_rows_from_f32(x, M, K, ldx, linear_stage_, dtype_, stream_));
  return gemm_.linear(linear_stage_, M, K, K, w, N, dtype_, y, ldy, DType::kF32);
}

namespace {
// Above this many rows fp8 projections quantize their activations for cuBLASLt's fp8 GEMM; up to
// it the W8A16 kernel streams the weights (on the tensor cores from two rows: measured on an H200
// at 8 x 16384 x 4096 it takes 0.039 ms against bf16 cuBLAS's 0.047 on twice the bytes) and keeps
// the activations in bf16.
constexpr int64_t kFp8TensorCoreMinRows = kc::kW8A16MaxRows + 1;  // M4 >= 16 then
}  // namespace

int64_t DeviceModel::fp8_stage_bytes(int64_t rows, int64_t cols) {
  const int64_t codes = (rows * cols + 255) / 256 * 256;
  return codes + rows * ((cols + kc::kFp8BlockCols - 1) / kc::kFp8BlockCols) * 4 + 256;
}

Status DeviceModel::reserve_dequant_stage(int64_t elements) {
  if (elements * 2 <= dequant_stage_.bytes()) return Status::ok();
  return dequant_stage_.allocate(elements * 2);
}

Status DeviceModel::project(const DeviceLinear& w, const float* x, int64_t ldx, const void* x16, int64_t M, float* y,
                            int64_t ldy) {
  if (w.is_fp8()) return project_fp8(w, x, ldx, x16, M, 1, y, ldy);
  if (dtype_ == DType::kF32 || !x16) return linear(x, M, w.in, ldx, w.dense, w.out, y, ldy);
  return gemm_.linear(x16, M, w.in, w.in, w.dense, w.out, dtype_, y, ldy, DType::kF32);
}

Status DeviceModel::project_many(std::span<const ProjectOut> outs, const float* x, const void* x16, int64_t M) {
  kc::GemvTarget streamed[kc::kGemvMaxTargets];
  int count = 0;
  const bool skinny = dtype_ == DType::kBF16 && x16 && gemm_.skinny_rows();
  for (const ProjectOut& o : outs) {
    const int64_t K = o.w.in, ldy = o.ldy > 0 ? o.ldy : o.w.out;
    if (skinny && !o.w.is_fp8() && K == outs.front().w.in && kc::gemv_fits(M, K, K, x16, o.w.dense) &&
        count < kc::kGemvMaxTargets) {
      streamed[count++] = {o.w.dense, o.w.out, o.y, ldy};
      continue;
    }
    DI_RETURN_IF_ERROR(project(o.w, x, K, x16, M, o.y, ldy));
  }
  if (count == 0) return Status::ok();
  return kc::gemv_bf16_many(x16, DType::kBF16, M, outs.front().w.in, outs.front().w.in, streamed, count, stream_);
}

Status DeviceModel::project_grouped(const DeviceLinear& w, const float* x, const void* x16, int64_t M, int64_t groups,
                                    float* y, int64_t ldy) {
  const int64_t K = w.in, N = w.out / groups, width = groups * K;
  if (w.is_fp8()) return project_fp8(w, x, width, x16, M, groups, y, ldy);
  if (dtype_ == DType::kBF16 && gemm_.skinny_rows() && kc::gemv_grouped_fits(M, groups, K, w.out, x, w.dense))
    return kc::gemv_bf16_grouped(x, M, groups, K, w.dense, w.out, y, ldy, stream_);
  const void* in = x;
  if (dtype_ != DType::kF32) {
    if (!x16) {
      DI_RETURN_IF_ERROR(kc::convert_rows_from_f32(x, M, width, width, linear_stage_, dtype_, stream_));
      x16 = linear_stage_;
    }
    in = x16;
  }
  return gemm_.linear_batched(in, M, K, width, K, w.dense, N, N * K, dtype_, y, ldy, N, DType::kF32, groups);
}

Status DeviceModel::project_fp8(const DeviceLinear& w, const float* x, int64_t ldx, const void* x16, int64_t M,
                                int64_t groups, float* y, int64_t ldy) {
  const int64_t K = w.in, N = w.out / groups, width = groups * K;
  if (dtype_ == DType::kF32)
    return kc::fp8_linear_w8a16(x, DType::kF32, M, ldx, K, w.fp8, groups, y, ldy, N, stream_);
  if (!x16) {
    DI_RETURN_IF_ERROR(kc::convert_rows_from_f32(x, M, width, ldx, linear_stage_, DType::kBF16, stream_));
    x16 = linear_stage_;
  }
  // Batch-invariant: the weight-streaming kernel for every M (one warp per output, its own K
  // order, looping over the rows), never a choice by M between it and the tensor cores.
  if (deterministic_) return kc::fp8_linear_w8a16(x16, DType::kBF16, M, width, K, w.fp8, groups, y, ldy, N, stream_);
  // cuBLASLt takes multiples of 4 rows; the last M % 4 rows stream the weights once more.
  const int64_t M4 = M / 4 * 4;
  const bool tensor_cores = fp8_activations_ && M >= kFp8TensorCoreMinRows && kc::Fp8Gemm::supports(w.fp8);
  if (!tensor_cores && M <= kc::kW8A16MaxRows)
    return kc::fp8_linear_w8a16(x16, DType::kBF16, M, width, K, w.fp8, groups, y, ldy, N, stream_);
  if (tensor_cores) {
    auto* codes = static_cast<uint8_t*>(fp8_stage_);
    auto* scales = reinterpret_cast<float*>(codes + (M * width + 255) / 256 * 256);
    DI_RETURN_IF_ERROR(kc::quantize_rows_fp8(x16, M4, width, width, fp8_pow2_scales_, codes, scales, M4, stream_));
    kc::Fp8Matrix part = w.fp8;
    part.rows = N;
    for (int64_t g = 0; g < groups; ++g) {
      part.data = w.fp8.data + g * N * K;
      part.scale = w.fp8.scale + (g * N / part.block_rows) * part.scale_row_stride;
      DI_RETURN_IF_ERROR(fp8_gemm_.linear(codes + g * K, width, scales + g * (K / kc::kFp8BlockCols) * M4, M4, part,
                                          y + g * N, ldy));
    }
    if (M4 == M) return Status::ok();
    return kc::fp8_linear_w8a16(static_cast<const uint16_t*>(x16) + M4 * width, DType::kBF16, M - M4, width, K, w.fp8,
                                groups, y + M4 * ldy, ldy, N, stream_);
  }
  if (dequant_stage_.bytes() < w.out * K * 2)
    return Status::internal("fp8 projection of " + std::to_string(w.out) + " x " + std::to_string(K) +
                            ": the dequantization stage was not reserved at load");
  DI_RETURN_IF_ERROR(kc::dequantize_fp8_to_bf16(w.fp8, dequant_stage_.get(), stream_));
  return gemm_.linear_batched(x16, M, K, width, K, dequant_stage_.get(), N, N * K, DType::kBF16, y, ldy, N,
                              DType::kF32, groups);
}

Status DeviceModel::run_grouped_experts(kc::MoeGroupedArgs g, const float* x, int64_t rows, const RoutedPairs& r,
                                        float* out) {
  const int64_t pairs = rows * g.top_k;
  DI_RETURN_IF_ERROR(kc::moe_group_pairs(r.expert_ids, pairs, g.experts, r.offsets, r.slot_pair, r.bad_id, stream_));
  g.x = x;
  g.offsets = r.offsets;
  g.slot_pair = r.slot_pair;
  g.pairs = pairs;
  g.dtype = dtype_;
  g.act = r.act;
  g.y = r.y;
  DI_RETURN_IF_ERROR(kc::moe_grouped_mlp(g, stream_));
  return kc::moe_combine_pairs(r.y, r.expert_weights, r.expert_ids, rows, g.top_k, g.hidden, out, stream_);
}

Status DeviceModel::experts_in_runs(const ExpertRuns& r) {
  const std::vector<int64_t>& count = *r.count;
  const int64_t E = static_cast<int64_t>(count.size()) - 1, H = r.hidden, I = r.inter, L = r.max_rows;
  std::vector<kc::Gemm::Group> up, down;
  // Pairs are contiguous in expert order, so a run is a span of pairs; an expert with more than L
  // pairs (a hash table may route a token to it twice) spans runs.
  int64_t e = 0, off = count[0];
  while (off < count[E]) {
    const int64_t run0 = off;
    up.clear();
    down.clear();
    while (e < E && off < count[E]) {
      if (off == count[e + 1]) {
        ++e;
        continue;
      }
      const int64_t n = std::min(count[e + 1] - off, L - (off - run0));
      if (n <= 0) break;  // the run is full
      const int64_t row = off - run0;
      up.push_back({r.x16 + off * H, n, r.w13[e], r.gate_up + row * 2 * I});
      down.push_back({r.act16 + row * I, n, r.w2[e], r.y + row * H});
      off += n;
    }
    const int64_t rows = off - run0;
    DI_RETURN_IF_ERROR(gemm_.linear_grouped(up, H, H, 2 * I, dtype_, 2 * I, DType::kF32));
    DI_RETURN_IF_ERROR(kc::clamped_swiglu_bf16(r.gate_up, rows, I, r.limit, r.act16, stream_));
    DI_RETURN_IF_ERROR(gemm_.linear_grouped(down, I, I, H, dtype_, H, DType::kF32));
    DI_RETURN_IF_ERROR(kc::scatter_add_rows(r.y, r.rows + run0, r.weights + run0, rows, H, r.out, stream_));
  }
  return Status::ok();
}

Status DeviceModel::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  int64_t rows = 0;
  DI_ASSIGN_OR_RETURN(float* dev, enqueue_forward(batch, &rows));
  logits.resize(static_cast<size_t>(rows * info_.vocab_size));
  if (rows == 0) return Status::ok();
  if (batch.masks) DI_RETURN_IF_ERROR(apply_masks(*batch.masks, batch, dev));
  DI_RETURN_IF_ERROR(kc::copy_to_host_async(logits.data(), dev, rows * info_.vocab_size * 4, stream_));
  DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));
  return check_forward();
}

Status DeviceModel::forward_sample(const ForwardBatch& batch, std::span<const SampleSpec> specs,
                                   std::vector<Result<SampledToken>>& out) {
  int64_t rows = 0;
  DI_ASSIGN_OR_RETURN(float* dev, enqueue_forward(batch, &rows));
  for (const SampleSpec& s : specs)
    if (s.row < 0 || s.row >= rows)
      return Status::invalid_argument("forward_sample: spec row " + std::to_string(s.row) + " outside the " +
                                      std::to_string(rows) + " logits rows");
  if (rows > 0 && batch.masks) DI_RETURN_IF_ERROR(apply_masks(*batch.masks, batch, dev));
  DI_RETURN_IF_ERROR(sampler_.sample(dev, info_.vocab_size, specs, stream_, out));
  if (specs.empty()) DI_RETURN_IF_ERROR(kc::stream_synchronize(stream_));
  return check_forward();
}

Status DeviceModel::apply_masks(LogitsMaskSource& masks, const ForwardBatch& batch, float* logits) {
  const int64_t V = info_.vocab_size, words = (V + 31) / 32, n = static_cast<int64_t>(batch.seqs.size());
  DI_ASSIGN_OR_RETURN(uint32_t* host, masks_.host_masks(n, words));
  std::vector<uint8_t> masked(static_cast<size_t>(n), 0);
  masks.fill(host, words, masked.data());  // the host's share, while the device runs the layers
  std::vector<int32_t> rows(static_cast<size_t>(n), -1);
  int64_t row = 0;
  for (int64_t s = 0; s < n; ++s) {
    const SequenceInput& in = batch.seqs[s];
    row += in.all_logits ? in.num_tokens : 1;
    if (masked[s]) rows[s] = static_cast<int32_t>(row - 1);  // the mask is for the last row
  }
  return masks_.apply(logits, V, V, rows.data(), stream_);
}

Status DeviceModel::stage_step(StepBatch& step, bool graph, int64_t logit_rows, const ReserveStep& reserve,
                               GraphCache& graphs) {
  const int64_t context = graph ? context_bucket(step.max_end()) : step.max_end();
  bool moved_ws = false, moved_meta = false;
  DI_RETURN_IF_ERROR(reserve(step.device().num_tokens, context, logit_rows, &moved_ws));
  DI_RETURN_IF_ERROR(step.upload(stream_, &moved_meta));
  if (moved_ws || moved_meta) graphs.clear();
  return Status::ok();
}

Result<float*> DeviceModel::enqueue_sequences(const ForwardBatch& batch, int64_t max_positions, int64_t* rows,
                                              const std::function<Status()>& reserve,
                                              const std::function<Status(const DeviceSeq&, float*)>& run) {
  DI_ASSIGN_OR_RETURN(int64_t out_rows, check_batch(batch, info_.vocab_size, max_positions));
  *rows = out_rows;
  const size_t G = groups_.size();
  std::vector<DeviceSeq> seqs(batch.seqs.size());
  std::vector<kernels::CacheView> views(batch.seqs.size() * G);
  std::vector<size_t> ids_at(batch.seqs.size()), table_at(batch.seqs.size() * G);
  metadata_host_.clear();
  for (size_t b = 0; b < batch.seqs.size(); ++b) {
    const SequenceInput& in = batch.seqs[b];
    const std::string where = "seqs[" + std::to_string(b) + "].cache";
    ids_at[b] = metadata_host_.size();
    metadata_host_.insert(metadata_host_.end(), in.tokens, in.tokens + in.num_tokens);
    for (size_t g = 0; g < G; ++g) {
      kernels::CacheView& v = views[b * G + g];
      if (!in.cache->paged_view(static_cast<int32_t>(g), &v) || !v.on_device)
        return Status::invalid_argument(where + ": the CUDA model needs a paged cache in device memory");
      const int64_t needed = cache_entries_needed(groups_[g], in.start_pos + in.num_tokens);
      if (needed > 0 && ((needed * v.compress_rate - 1) / v.block_size) >= v.num_blocks)
        return Status::invalid_argument(where + ": group '" + groups_[g].name + "' has no room for " +
                                        std::to_string(needed) + " entries");
      table_at[b * G + g] = metadata_host_.size();
      metadata_host_.insert(metadata_host_.end(), v.block_ids, v.block_ids + v.num_blocks);
    }
  }
  DI_ASSIGN_OR_RETURN(const int32_t* dmeta, upload_metadata());
  for (size_t b = 0; b < batch.seqs.size(); ++b) {
    const SequenceInput& in = batch.seqs[b];
    DeviceSeq& s = seqs[b];
    s.L = in.num_tokens;
    s.s = in.start_pos;
    s.all_logits = in.all_logits;
    s.tokens = in.tokens;
    s.ids = dmeta + ids_at[b];
    for (size_t g = 0; g < G; ++g) {
      s.views.push_back(views[b * G + g]);
      s.views.back().block_ids = dmeta + table_at[b * G + g];
    }
  }
  DI_RETURN_IF_ERROR(reserve());
  const int64_t V = info_.vocab_size;
  DI_RETURN_IF_ERROR(grow_buffer(logits_out_, out_rows * V * 4));
  float* out = logits_out_.as<float>();
  for (const DeviceSeq& s : seqs) {
    DI_RETURN_IF_ERROR(run(s, out));
    out += (s.all_logits ? s.L : 1) * V;
  }
  return logits_out_.as<float>();
}

Result<const int32_t*> DeviceModel::upload_metadata() {
  const int64_t bytes = static_cast<int64_t>(metadata_host_.size()) * 4;
  if (bytes > metadata_.bytes()) DI_RETURN_IF_ERROR(metadata_.allocate(std::max(bytes, 2 * metadata_.bytes())));
  DI_RETURN_IF_ERROR(kc::copy_to_device(metadata_.get(), metadata_host_.data(), bytes));
  return metadata_.as<const int32_t>();
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
