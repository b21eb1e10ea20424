// The C ABI's Engine section: di_engine (an LLMEngine and its tokenizer text), di_request (a
// request stream plus the buffers a di_chunk borrows), submit / poll / cancel / metrics / info.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "capi/src/build_probe.h"
#include "capi/src/engine_constraint.h"
#include "capi/src/engine_handle.h"
#include "capi/src/engine_options.h"
#include "capi/src/engine_token_text.h"
#include "engine/engine.h"
#include "engine/model/model.h"

namespace {

using di::engine::CompletionChunk;
using di::engine::LLMEngine;
using di::engine::RequestStream;

// The storage a di_chunk's pointers borrow.
struct ChunkBuffers {
  CompletionChunk chunk;
  std::vector<int32_t> top_ids;
  std::vector<float> top_lps;

  void fill(di_chunk* out) {
    di_chunk c;
    std::memset(&c, 0, sizeof c);
    c.struct_size = sizeof(di_chunk);
    c.index = static_cast<uint32_t>(chunk.index);
    c.request_id = chunk.request_id;
    c.token_ids = chunk.token_ids.data();
    c.num_tokens = chunk.token_ids.size();
    c.text = chunk.text.c_str();
    c.text_len = chunk.text.size();
    top_ids.clear();
    top_lps.clear();
    uint32_t k = 0;
    for (const auto& row : chunk.top_logprobs) k = std::max<uint32_t>(k, static_cast<uint32_t>(row.size()));
    for (const auto& row : chunk.top_logprobs) {
      for (uint32_t i = 0; i < k; ++i) {
        top_ids.push_back(i < row.size() ? row[i].first : -1);
        top_lps.push_back(i < row.size() ? row[i].second : 0.0f);
      }
    }
    c.logprobs = chunk.logprobs.empty() ? nullptr : chunk.logprobs.data();
    c.num_top_logprobs = k;
    c.top_logprob_ids = k ? top_ids.data() : nullptr;
    c.top_logprobs = k ? top_lps.data() : nullptr;
    c.finish_reason = static_cast<int32_t>(chunk.finish_reason);
    c.is_final = chunk.is_final ? 1 : 0;
    c.prompt_tokens = chunk.prompt_tokens;
    c.cached_prompt_tokens = chunk.cached_prompt_tokens;
    c.completion_tokens = chunk.completion_tokens;
    c.error_message = chunk.error.c_str();
    c.error_message_len = chunk.error.size();
    const uint32_t n = std::min<uint32_t>(out->struct_size, sizeof(di_chunk));
    std::memcpy(out, &c, n);
    out->struct_size = n;
  }
};

}  // namespace

struct di_request {
  std::shared_ptr<RequestStream> stream;
  std::shared_ptr<di::capi::CancelChannel> channel;
  ChunkBuffers current;
  bool ended = false;
};

namespace di::capi {

di_status submit_request(di_engine* engine, std::vector<int32_t> prompt, engine::SamplingParams params,
                         const std::optional<engine::constrain::ConstraintSpec>& spec,
                         di_chunk_callback on_chunk, void* user_data, di_request** out, di_error** err) {
  // A finished grammar allows only end-of-sequence; generating past it has no allowed token.
  if (spec && params.ignore_eos)
    return fail(err, DI_E_INVALID_ARG, "ignore_eos: cannot be combined with an output constraint");
  std::unique_ptr<engine::TokenConstraint> constraint;
  if (spec) {
    auto c = engine->grammars->make(*spec);
    if (!c.is_ok()) return fail(err, c.status());
    constraint = std::move(c).value();
  }
  RequestStream::Callback callback;
  if (on_chunk) {
    callback = [on_chunk, user_data](const CompletionChunk& chunk) {
      ChunkBuffers b;
      b.chunk = chunk;
      di_chunk c;
      c.struct_size = sizeof(di_chunk);
      b.fill(&c);
      on_chunk(&c, user_data);
    };
  }
  auto stream = engine->engine->submit(std::move(prompt), std::move(params), std::move(callback), std::move(constraint));
  if (!stream.is_ok()) return fail(err, stream.status());
  auto req = std::make_unique<di_request>();
  req->stream = std::move(stream).value();
  req->channel = engine->channel;
  *out = req.release();
  return DI_OK;
}

}  // namespace di::capi

extern "C" {

DI_API di_status di_engine_create(const char* model_dir, size_t model_dir_len,
                                  const di_options* options, di_engine** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(model_dir, err);
  DI_REQUIRE_ARG(out, err);
  const std::string dir(model_dir, model_dir_len);
  auto setup = di::capi::engine_setup_from_options(options);
  if (!setup.is_ok()) return di::capi::fail(err, setup.status());
  // Before the weights load: a layout this build cannot run fails in microseconds, not minutes.
  auto layout = LLMEngine::check_parallel(setup->config.parallel);
  if (!layout.is_ok()) return di::capi::fail(err, layout.status());
  auto model = di::engine::load_model(dir, setup->model);
  if (!model.is_ok()) return di::capi::fail(err, model.status());
  auto tokenizer = di::capi::load_engine_tokenizer(dir);
  if (!tokenizer.is_ok()) return di::capi::fail(err, tokenizer.status());
  std::shared_ptr<const di::engine::TokenText> text;
  if (*tokenizer) text = di::capi::make_token_text(*tokenizer);
  auto engine = LLMEngine::create(std::move(model).value(), setup->config, std::move(text));
  if (!engine.is_ok()) return di::capi::fail(err, engine.status());
  auto handle = std::make_unique<di_engine>();
  handle->engine = std::move(engine).value();
  const di::engine::ModelInfo& mi = handle->engine->info().model;
  handle->grammars = std::make_unique<di::capi::EngineGrammars>(std::move(tokenizer).value(), mi.vocab_size, mi.eos_token_ids,
                                                                   setup->grammar_limits);
  handle->channel = std::make_shared<di::capi::CancelChannel>();
  handle->channel->engine = handle->engine.get();
  *out = handle.release();
  return DI_OK;
  DI_API_END(err)
}

DI_API void di_engine_destroy(di_engine* engine) {
  if (!engine) return;
  try {
    {
      std::lock_guard<std::mutex> l(engine->channel->mu);
      engine->channel->engine = nullptr;
    }
    engine->engine.reset();
  } catch (...) {
  }
  delete engine;
}

DI_API di_status di_submit(di_engine* engine, const int32_t* ids, size_t num_ids,
                           const di_options* sampling, di_chunk_callback on_chunk,
                           void* user_data, di_request** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(engine, err);
  DI_REQUIRE_ARG(out, err);
  if (ids == nullptr && num_ids > 0) return di::capi::fail(err, DI_E_INVALID_ARG, "ids: must not be NULL");
  auto params = di::capi::sampling_from_options(sampling);
  if (!params.is_ok()) return di::capi::fail(err, params.status());
  auto spec = di::capi::constraint_from_options(sampling);
  if (!spec.is_ok()) return di::capi::fail(err, spec.status());
  return di::capi::submit_request(engine, std::vector<int32_t>(ids, ids + num_ids), std::move(params).value(),
                                  *spec, on_chunk, user_data, out, err);
  DI_API_END(err)
}

DI_API di_status di_poll_chunk(di_request* request, int32_t timeout_ms, di_chunk* chunk,
                               di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(request, err);
  DI_REQUIRE_ARG(chunk, err);
  if (chunk->struct_size == 0)
    return di::capi::fail(err, DI_E_INVALID_ARG, "chunk->struct_size: set it to sizeof(di_chunk)");
  if (request->stream->has_callback())
    return di::capi::fail(err, DI_E_STATE, "request: its chunks go to the on_chunk callback, not to di_poll_chunk");
  switch (request->stream->poll(timeout_ms < 0 ? -1 : timeout_ms, &request->current.chunk)) {
    case RequestStream::Poll::kTimeout: return DI_TIMEOUT;
    case RequestStream::Poll::kEnd: return DI_END_OF_STREAM;
    case RequestStream::Poll::kChunk: break;
  }
  request->current.fill(chunk);
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_cancel(di_request* request, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(request, err);
  if (!request->stream->finished()) request->channel->cancel(request->stream->id());
  return DI_OK;
  DI_API_END(err)
}

DI_API uint64_t di_request_id(const di_request* request) { return request ? request->stream->id() : 0; }

DI_API void di_request_destroy(di_request* request) {
  if (!request) return;
  try {
    if (!request->stream->finished()) request->channel->cancel(request->stream->id());
  } catch (...) {
  }
  delete request;
}

DI_API di_status di_engine_metrics(di_engine* engine, int32_t format, char** out, size_t* len,
                                   di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(engine, err);
  DI_REQUIRE_ARG(out, err);
  if (format != 0 && format != 1)
    return di::capi::fail(err, DI_E_INVALID_ARG, "format: expected 0 (JSON) or 1 (Prometheus), got " + std::to_string(format));
  return di::capi::copy_text_out(format == 0 ? engine->engine->metrics_json() : engine->engine->metrics_prometheus(), out, len, err);
  DI_API_END(err)
}

DI_API di_status di_engine_info(di_engine* engine, char** out, size_t* len, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(engine, err);
  DI_REQUIRE_ARG(out, err);
  const di::engine::EngineInfo& i = engine->engine->info();
  nlohmann::json j = {
      {"model", {{"family", i.model.family}, {"model_dir", i.model.model_dir},
                 {"vocab_size", i.model.vocab_size}, {"max_position_embeddings", i.model.max_position_embeddings},
                 {"bos_token_id", i.model.bos_token_id}, {"eos_token_ids", i.model.eos_token_ids}}},
      {"device", i.model.device},
      {"limits", {{"max_model_len", i.config.max_model_len}, {"max_num_seqs", i.config.max_num_seqs},
                  {"max_num_batched_tokens", i.config.max_num_batched_tokens}, {"block_size", i.config.block_size},
                  {"kv_cache_bytes", i.config.kv_cache_bytes}, {"num_kv_blocks", i.num_kv_blocks},
                  {"kv_block_bytes", i.kv_block_bytes}, {"kv_slot_bytes", i.kv_slot_bytes}}},
      {"enable_prefix_caching", i.config.enable_prefix_caching},
      {"async_scheduling", i.config.async_scheduling},
      {"deterministic", i.config.deterministic},
      {"batch_invariant", i.batch_invariant},
      {"batch_invariance", !i.batch_invariant ? "off" : i.invariant_kernels ? "kernels" : "per_sequence"},
      {"num_speculative_tokens", i.config.num_speculative_tokens},
      {"speculative_variable", i.config.speculative_variable == 1},
      {"tokenizer", engine->engine->has_token_text()},
      {"parallel", {{"tensor_parallel_size", i.parallel.config.tensor_parallel_size},
                    {"expert_parallel_size", i.parallel.config.expert_parallel_size},
                    {"data_parallel_size", i.parallel.config.data_parallel_size},
                    {"world_size", i.parallel.world_size}, {"rank", i.parallel.rank},
                    {"local_rank", i.parallel.local_rank},
                    {"dp_vote", i.parallel.config.dp_vote == di::engine::DpVoteMode::kAll ? "all" : "any"},
                    {"rendezvous", i.parallel.rendezvous.to_string()},
                    {"eplb", {{"enabled", i.parallel.config.enable_eplb},
                              {"rebalance_interval", i.parallel.config.eplb_rebalance_interval},
                              {"num_redundant_experts", i.parallel.config.eplb_num_redundant_experts}}}}},
      {"backends", di::capi::backends_json()},
  };
  return di::capi::copy_text_out(j.dump(), out, len, err);
  DI_API_END(err)
}

}  // extern "C"
