// LLM::load: the one place the offline API reaches the model registry (kept apart so tests that
// bring their own model need not link a model family).
#include "engine/llm.h"

namespace di::engine {

Result<std::unique_ptr<LLM>> LLM::load(const std::string& model_dir, const EngineConfig& config,
                                       const ModelOptions& model_options,
                                       std::shared_ptr<const TokenText> token_text) {
  DI_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, load_model(model_dir, model_options));
  return from_model(std::move(model), config, std::move(token_text));
}

}  // namespace di::engine
