// DeepseekV4Model: the deepseek_v4 family behind the Model seam on the CPU (fp32). Declares its
// cache groups, loads config + weights, and runs the layers over each sequence's new tokens;
// all per-sequence state lives in the SequenceCache the engine provides.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/deepseek_v4/attention.h"
#include "engine/model/deepseek_v4/chunk.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"
#include "engine/model/model.h"

namespace di::engine::deepseek_v4 {

class DeepseekV4Model final : public Model {
 public:
  DeepseekV4Model(DeepseekV4Config config, std::unique_ptr<DeepseekV4Weights> weights,
                  std::string model_dir);

  const ModelInfo& info() const override { return info_; }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return groups_; }
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override;
  Status drafts_supported() const override;
  // Drafts with MTP layer 0, chained on its own output streams for draft tokens past the first
  // (DeepSeek's one MTP layer reused, as its inference does).
  Status propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) override;

  const DeepseekV4Config& config() const { return config_; }
  const DeepseekV4Weights& weights() const { return *weights_; }
  const Ropes& ropes() const { return ropes_; }

  // One chunk of one sequence with a logits row per token, keeping the final mHC streams
  // [num_tokens, hc_mult, hidden] (the MTP layers' input; before the final hc head).
  Status forward_chunk(const Chunk& chunk, float* logits, std::vector<float>* final_streams) const;
  // MTP layer k (speculative decoding's draft) over a chunk the main model has just run:
  // `streams` are that run's final streams, next[i] the token after position i. Writes a logits
  // row per position, predicting the token after next, and the block's output streams (the
  // input of a longer draft) when out_streams is given. Its sliding-window rows are the swa_kv
  // group's layer num_hidden_layers + k in the chunk's cache. Errors: no such MTP layer (the
  // message says why MTP is unavailable), a token outside the vocabulary.
  // With all_logits false only the last position's row is written (the draft; the rows before
  // only feed the MTP layer's cache).
  Status mtp_forward(int32_t k, const Chunk& chunk, const float* streams, const int32_t* next, float* logits,
                     std::vector<float>* out_streams, bool all_logits = true) const;
  int32_t num_mtp_layers() const { return static_cast<int32_t>(weights_->mtp_layers.size()); }

 private:
  // Runs one sequence's chunk; writes `rows` logits rows (the last or all tokens) at `logits`.
  void forward_sequence(const Chunk& chunk, bool all_logits, float* logits,
                        std::vector<float>* final_streams = nullptr) const;
  // One decoder layer over `streams` [num_tokens, hc, hidden] in place; `layer` indexes the cache.
  void run_layer(const LayerWeights& lw, int32_t layer, bool hash_routed, const Chunk& chunk,
                 const int32_t* route_tokens, float* streams) const;

  DeepseekV4Config config_;
  std::unique_ptr<DeepseekV4Weights> weights_;
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  CacheLayout layout_;
  Ropes ropes_;
  // The final streams of the last forward()'s keep_hidden sequences, by batch index.
  std::vector<std::vector<float>> hidden_;
};

// The cache groups a deepseek_v4 model declares (fp32 entries), and where each lives in
// `layout`; shared by the CPU and CUDA models so both read the same cache.
// `mtp_layers` MTP blocks get sliding-ring rows after the main layers'.
std::vector<CacheGroupSpec> make_cache_groups(const DeepseekV4Config& c, CacheLayout* layout, int32_t mtp_layers = 0);

// The registry's factory (registry.cpp): the CUDA model when options.device is "cuda".
Result<std::unique_ptr<Model>> create_model(const std::string& model_dir,
                                            const nlohmann::json& config,
                                            const ModelOptions& options);

}  // namespace di::engine::deepseek_v4
