// The di_engine handle shared by the engine's C ABI files (engine.cpp, engine_prepared.cpp): the
// LLMEngine, the channel requests cancel through, and the engine's grammar compiler; plus the one
// submit path both di_submit and di_submit_prepared end in.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "capi/src/engine_constraint.h"
#include "deepinfer.h"
#include "engine/engine.h"

namespace di::capi {

// Lets requests cancel through their engine without ever owning it: di_engine_destroy nulls
// the pointer (under the mutex) before the engine goes away.
struct CancelChannel {
  std::mutex mu;
  engine::LLMEngine* engine = nullptr;
  void cancel(uint64_t id) {
    std::lock_guard<std::mutex> l(mu);
    if (engine) engine->cancel(id);
  }
};

}  // namespace di::capi

struct di_engine {
  std::unique_ptr<di::engine::LLMEngine> engine;
  std::shared_ptr<di::capi::CancelChannel> channel;
  std::unique_ptr<di::capi::EngineGrammars> grammars;
};

namespace di::capi {

// Submits sampling parameters (the engine validates them) with the grammar `constraint` names,
// compiled by the engine's GrammarCompiler; fills *out on DI_OK.
di_status submit_request(di_engine* engine, std::vector<int32_t> prompt, engine::SamplingParams params,
                         const std::optional<engine::constrain::ConstraintSpec>& constraint,
                         di_chunk_callback on_chunk, void* user_data, di_request** out, di_error** err);

}  // namespace di::capi
