// LLMEngine: the runtime around one model — submit and cancel from any thread, a background step
// thread (schedule -> forward -> sample -> update) and an output thread (detokenize, stop strings,
// logprobs, delivery). With async scheduling the output work of step N overlaps step N+1.
// Knows nothing of HTTP, API protocols or the C ABI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/kv/kv_cache_manager.h"
#include "engine/model/model.h"
#include "engine/output/request_stream.h"
#include "engine/output/token_text.h"
#include "engine/parallel/parallel_config.h"
#include "engine/sample/sampling_params.h"
#include "engine/sample/token_constraint.h"

namespace di::engine {

class DpCoordinator;

struct EngineConfig {
  int32_t block_size = 16;
  int64_t kv_cache_bytes = 0;       // 0: room for max_num_seqs full-length sequences, at most 1 GiB
  int64_t max_model_len = 0;        // 0: the model's max_position_embeddings
  int64_t max_num_batched_tokens = 2048;
  int32_t max_num_seqs = 64;
  bool enable_prefix_caching = true;
  bool async_scheduling = true;
  bool deterministic = false;
  // Speculative decoding with the model's own MTP layers: the largest draft a step verifies
  // (0: off; -1: from the environment, DEEPINFER_USE_NEXTN_DECODE=N, or 5 when only
  // DEEPINFER_ENABLE_MTP_VARLEN=1 is set; neither: off). Asked for here, a model without MTP
  // layers (or a device model) fails create; asked for by the environment, it runs without drafts.
  int32_t num_speculative_tokens = -1;
  // 1: each step verifies as many draft tokens as the draft's confidence and the measured step
  // costs make worth it (at most num_speculative_tokens); 0: always num_speculative_tokens;
  // -1: DEEPINFER_ENABLE_MTP_VARLEN (unset: 1). Deterministic mode always uses 0.
  int32_t speculative_variable = -1;
  // The multi-GPU layout. The default (every size 1, EPLB off) is one process on one device and
  // reads no environment; a layout of more than one process is refused (DI_E_UNSUPPORTED) until
  // the NCCL paths are built, naming the missing part.
  ParallelConfig parallel;
  // Data-parallel ranks in one process (engine/sched/dp_coordinator.h): each step joins the
  // coordinator's vote as rank dp_rank — decode-only when the vote says so, an empty step when
  // this rank has nothing but others do. Null (the default): the engine steps on its own.
  std::shared_ptr<DpCoordinator> dp_coordinator;
  int32_t dp_rank = 0;
};

struct EngineInfo {
  ModelInfo model;
  EngineConfig config;  // with defaults resolved
  int64_t num_kv_blocks = 0;
  int64_t kv_block_bytes = 0;
  int64_t kv_slot_bytes = 0;
  // Deterministic mode: outputs do not depend on batch composition, chunking or prefix hits;
  // invariant_kernels: through the model's batch-invariant kernels (sequences still batched)
  // rather than a forward per sequence.
  bool batch_invariant = false;
  bool invariant_kernels = false;
  ParallelLayout parallel;  // this process's place in the layout (world size 1 by default)
};

class LLMEngine {
 public:
  // Takes the model, sizes the KV cache and starts the threads. `token_text` (may be null) gives
  // streamed text and stop strings.
  static Result<std::unique_ptr<LLMEngine>> create(std::unique_ptr<Model> model, EngineConfig config,
                                                   std::shared_ptr<const TokenText> token_text);
  // The layout's checks create runs, for callers that want them before loading a model: the
  // resolved layout, or why it is invalid (DI_E_INVALID_ARG) or not built yet (DI_E_UNSUPPORTED).
  static Result<ParallelLayout> check_parallel(const ParallelConfig& config);
  // Cancels every unfinished request (each gets a final "cancelled" chunk) and joins the threads.
  ~LLMEngine();

  // Queues a request; returns at once. Chunks go to `callback` (on the output thread) when set,
  // else to the returned stream's queue. `constraint` (may be null) masks the sampler.
  Result<std::shared_ptr<RequestStream>> submit(std::vector<int32_t> prompt, SamplingParams params,
                                                RequestStream::Callback callback = {},
                                                std::unique_ptr<TokenConstraint> constraint = nullptr);
  // Ends a request early (idempotent; unknown or finished ids are ignored).
  void cancel(uint64_t request_id);

  const EngineInfo& info() const;
  // True when the engine streams text (it was given the model's tokenizer).
  bool has_token_text() const;
  std::string metrics_json() const;
  std::string metrics_prometheus() const;
  // The KV cache's numbers as of the end of the last step-loop iteration.
  KvCacheStats kv_stats() const;

  struct Impl;

 private:
  explicit LLMEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace di::engine
