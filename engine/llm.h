// LLM: the offline API, as DeepInfer's LLM(model).generate(prompts, sampling_params) — submits a
// batch of prompts to an LLMEngine, waits, and returns every completion in prompt order. A thin
// layer over LLMEngine; adds no scheduling of its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/engine.h"

namespace di::engine {

struct CompletionOutput {
  int32_t index = 0;
  std::vector<int32_t> token_ids;
  std::string text;
  FinishReason finish_reason = FinishReason::kNone;
  std::string error;
  std::vector<float> logprobs;
  std::vector<std::vector<std::pair<int32_t, float>>> top_logprobs;
};

struct RequestOutput {
  uint64_t request_id = 0;
  std::vector<int32_t> prompt_token_ids;
  int64_t num_cached_tokens = 0;
  std::vector<CompletionOutput> outputs;  // n completions, by index
};

class LLM {
 public:
  // Loads a model directory (load_model) and starts an engine on it.
  static Result<std::unique_ptr<LLM>> load(const std::string& model_dir, const EngineConfig& config,
                                           const ModelOptions& model_options = {},
                                           std::shared_ptr<const TokenText> token_text = nullptr);
  // Starts an engine on an already-built model.
  static Result<std::unique_ptr<LLM>> from_model(std::unique_ptr<Model> model, const EngineConfig& config,
                                                 std::shared_ptr<const TokenText> token_text = nullptr);

  // Generates for every prompt (one SamplingParams for all, or one per prompt). All prompts are
  // validated before any is submitted; outputs come back in prompt order.
  Result<std::vector<RequestOutput>> generate(const std::vector<std::vector<int32_t>>& prompts,
                                              const SamplingParams& params);
  Result<std::vector<RequestOutput>> generate(const std::vector<std::vector<int32_t>>& prompts,
                                              const std::vector<SamplingParams>& params);

  LLMEngine& engine() { return *engine_; }

 private:
  explicit LLM(std::unique_ptr<LLMEngine> e) : engine_(std::move(e)) {}
  std::unique_ptr<LLMEngine> engine_;
};

}  // namespace di::engine
