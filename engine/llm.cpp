// LLM::from_model and generate: submit all, drain each stream in order.
#include "engine/llm.h"

namespace di::engine {

Result<std::unique_ptr<LLM>> LLM::from_model(std::unique_ptr<Model> model, const EngineConfig& config,
                                             std::shared_ptr<const TokenText> token_text) {
  DI_ASSIGN_OR_RETURN(auto engine, LLMEngine::create(std::move(model), config, std::move(token_text)));
  return std::unique_ptr<LLM>(new LLM(std::move(engine)));
}

Result<std::vector<RequestOutput>> LLM::generate(const std::vector<std::vector<int32_t>>& prompts,
                                                 const SamplingParams& params) {
  return generate(prompts, std::vector<SamplingParams>(prompts.size(), params));
}

Result<std::vector<RequestOutput>> LLM::generate(const std::vector<std::vector<int32_t>>& prompts,
                                                 const std::vector<SamplingParams>& params) {
  if (params.size() != prompts.size())
    return Status::invalid_argument("sampling_params: expected one per prompt (" + std::to_string(prompts.size()) +
                                    "), got " + std::to_string(params.size()));
  const ModelInfo& mi = engine_->info().model;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Status st = params[i].validate(mi.vocab_size);
    if (!st.is_ok()) return std::move(st).with_context("prompts[" + std::to_string(i) + "]");
  }
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto s = engine_->submit(prompts[i], params[i]);
    if (!s.is_ok()) {
      for (auto& open : streams) engine_->cancel(open->id());
      return Status(s.status()).with_context("prompts[" + std::to_string(i) + "]");
    }
    streams.push_back(std::move(s).value());
  }
  std::vector<RequestOutput> out(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    RequestOutput& r = out[i];
    r.request_id = streams[i]->id();
    r.prompt_token_ids = prompts[i];
    r.outputs.resize(static_cast<size_t>(params[i].n));
    for (int32_t k = 0; k < params[i].n; ++k) r.outputs[k].index = k;
    CompletionChunk c;
    while (streams[i]->poll(-1, &c) == RequestStream::Poll::kChunk) {
      CompletionOutput& o = r.outputs[static_cast<size_t>(c.index)];
      o.token_ids.insert(o.token_ids.end(), c.token_ids.begin(), c.token_ids.end());
      o.text += c.text;
      o.logprobs.insert(o.logprobs.end(), c.logprobs.begin(), c.logprobs.end());
      for (auto& t : c.top_logprobs) o.top_logprobs.push_back(std::move(t));
      r.num_cached_tokens = c.cached_prompt_tokens;
      if (c.finish_reason != FinishReason::kNone) {
        o.finish_reason = c.finish_reason;
        o.error = c.error;
      }
    }
  }
  return out;
}

}  // namespace di::engine
