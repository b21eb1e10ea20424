// LLMEngine: creation, submission, cancellation and the step thread.
#include "engine/engine.h"

#include "base/log.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include "engine/engine_impl.h"
#include "kernels/keyed_rng.h"

namespace di::engine {
namespace {

constexpr int64_t kDefaultKvCap = int64_t{1} << 30;
constexpr int32_t kMaxNumSeqs = 1 << 16;

Status validate_config(const EngineConfig& c) {
  if (c.block_size < 1 || c.block_size > 1024)
    return Status::invalid_argument("block_size: expected 1..1024, got " + std::to_string(c.block_size));
  // Each running place has a cache slot (and a checkpoint slot) sized up front: an unbounded count
  // would spend minutes and gigabytes on bookkeeping before any budget check could refuse it.
  if (c.max_num_seqs < 1 || c.max_num_seqs > kMaxNumSeqs)
    return Status::invalid_argument("max_num_seqs: expected 1.." + std::to_string(kMaxNumSeqs) + ", got " +
                                    std::to_string(c.max_num_seqs));
  if (c.max_num_batched_tokens < 1)
    return Status::invalid_argument("max_num_batched_tokens: expected >= 1, got " + std::to_string(c.max_num_batched_tokens));
  if (c.max_model_len < 0) return Status::invalid_argument("max_model_len: expected >= 1, got " + std::to_string(c.max_model_len));
  if (c.kv_cache_bytes < 0) return Status::invalid_argument("kv_cache_bytes: expected > 0, got " + std::to_string(c.kv_cache_bytes));
  return Status::ok();
}

// An environment variable as a non-negative integer; -1 when unset, -2 when malformed.
int64_t env_count(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return *end == '\0' && x >= 0 && x <= 1024 ? x : -2;
}

constexpr int32_t kDefaultDraftTokens = 5;  // the seeds' DEEPINFER_USE_NEXTN_DECODE default
constexpr int32_t kMaxDraftTokens = 64;

// Resolves the speculative options from the environment where they are -1; `from_env` says
// whether it was the environment that turned drafting on.
Status resolve_speculative(EngineConfig& c, bool* from_env) {
  *from_env = false;
  const int64_t nextn = env_count("DEEPINFER_USE_NEXTN_DECODE");
  const int64_t varlen = env_count("DEEPINFER_ENABLE_MTP_VARLEN");
  if (nextn == -2) return Status::invalid_argument("DEEPINFER_USE_NEXTN_DECODE: expected an integer in 0..1024");
  if (varlen == -2 || varlen > 1) return Status::invalid_argument("DEEPINFER_ENABLE_MTP_VARLEN: expected 0 or 1");
  if (c.num_speculative_tokens == -1) {
    c.num_speculative_tokens = nextn >= 0 ? static_cast<int32_t>(nextn) : varlen == 1 ? kDefaultDraftTokens : 0;
    *from_env = c.num_speculative_tokens > 0;
  }
  if (c.num_speculative_tokens < 0 || c.num_speculative_tokens > kMaxDraftTokens)
    return Status::invalid_argument("num_speculative_tokens: expected 0.." + std::to_string(kMaxDraftTokens) +
                                    ", got " + std::to_string(c.num_speculative_tokens));
  if (c.speculative_variable == -1) c.speculative_variable = varlen == 0 ? 0 : 1;
  if (c.speculative_variable != 0 && c.speculative_variable != 1)
    return Status::invalid_argument("speculative_variable: expected 0 or 1, got " + std::to_string(c.speculative_variable));
  if (c.deterministic) c.speculative_variable = 0;  // a draft's length must not depend on timing
  return Status::ok();
}

// Whether `model` can draft under `c`, capping the draft to what the cache can roll back.
Status check_speculative(EngineConfig& c, Model& model, const CacheLayout& layout, bool from_env) {
  if (c.num_speculative_tokens == 0) return Status::ok();
  Status st = model.drafts_supported();
  for (const CacheGroupSpec& g : layout.groups)
    if (st.is_ok() && g.kind == CacheKind::kStateSlot)
      st = Status::unsupported("speculative decoding: cache group '" + g.name + "' is a state slot, which cannot "
                               "be rolled back past a rejected draft");
  if (!st.is_ok()) {
    if (!from_env) return Status(st.code(), "num_speculative_tokens: " + st.message());
    log::warn("speculative decoding off (DEEPINFER_USE_NEXTN_DECODE / DEEPINFER_ENABLE_MTP_VARLEN): %s",
              st.message().c_str());
    c.num_speculative_tokens = 0;
    return Status::ok();
  }
  int64_t ring = 0;
  for (const CacheGroupSpec& g : layout.groups)
    if (g.kind == CacheKind::kSlidingRing && (ring == 0 || g.window < ring)) ring = g.window;
  if (ring > 0 && c.num_speculative_tokens > ring - 1) c.num_speculative_tokens = static_cast<int32_t>(ring - 1);
  return Status::ok();
}

// The layout's checks, then what this build cannot run yet: every process count above one needs
// the NCCL communicator and the sharded layers, which this engine does not have.
Result<ParallelLayout> check_parallel_impl(const ParallelConfig& c) {
  if (c.is_default()) {
    ParallelLayout l;
    l.config = c;  // dp_vote may be set: it has nothing to vote on in one process
    return l;
  }
  DI_ASSIGN_OR_RETURN(ParallelLayout l, resolve_parallel_layout(c, process_env()));
  if (l.world_size == 1) return l;
  std::string missing;
  auto add = [&](const std::string& part) { missing += (missing.empty() ? "" : "; ") + part; };
  if (c.tensor_parallel_size > 1)
    add("tensor_parallel_size " + std::to_string(c.tensor_parallel_size) +
        ": tensor parallelism (NCCL communicator, sharded attention and dense layers) is not built yet");
  if (c.expert_parallel_size > 1)
    add("expert_parallel_size " + std::to_string(c.expert_parallel_size) +
        ": expert parallelism (all-to-all token dispatch" + (c.enable_eplb ? ", EPLB weight moves" : "") +
        ") is not built yet");
  if (c.data_parallel_size > 1)
    add("data_parallel_size " + std::to_string(c.data_parallel_size) +
        ": data-parallel ranks across processes (the vote's all-gather over NCCL) are not built yet");
  return Status::unsupported("parallel layout of " + std::to_string(l.world_size) + " processes: " + missing);
}

}  // namespace

Result<ParallelLayout> LLMEngine::check_parallel(const ParallelConfig& config) { return check_parallel_impl(config); }

LLMEngine::LLMEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<LLMEngine>> LLMEngine::create(std::unique_ptr<Model> model, EngineConfig config,
                                                     std::shared_ptr<const TokenText> token_text) {
  if (!model) return Status::invalid_argument("model: must not be null");
  DI_RETURN_IF_ERROR(validate_config(config));
  if (config.dp_coordinator && (config.dp_rank < 0 || config.dp_rank >= config.dp_coordinator->num_ranks()))
    return Status::invalid_argument("dp_rank: expected 0.." + std::to_string(config.dp_coordinator->num_ranks() - 1) +
                                    ", got " + std::to_string(config.dp_rank));
  DI_ASSIGN_OR_RETURN(ParallelLayout parallel, check_parallel_impl(config.parallel));
  const ModelInfo& mi = model->info();
  if (mi.vocab_size <= 0) return Status::invalid_argument("model: vocab_size must be > 0");
  if (config.max_model_len == 0) config.max_model_len = mi.max_position_embeddings;
  if (config.max_model_len <= 0)
    return Status::invalid_argument("max_model_len: the model declares none; set max_model_len");
  if (mi.max_position_embeddings > 0 && config.max_model_len > mi.max_position_embeddings)
    return Status::invalid_argument("max_model_len: " + std::to_string(config.max_model_len) +
                                    " exceeds the model's max_position_embeddings " +
                                    std::to_string(mi.max_position_embeddings));
  DI_ASSIGN_OR_RETURN(CacheLayout layout, make_cache_layout(model->cache_groups(), config.block_size));
  // Deterministic mode: a model whose kernels are batch-invariant keeps batching; any other
  // runs each sequence in a forward of its own, which no batch can then change either.
  const bool invariant_kernels = config.deterministic && model->enable_batch_invariance();
  bool spec_from_env = false;
  DI_RETURN_IF_ERROR(resolve_speculative(config, &spec_from_env));
  DI_RETURN_IF_ERROR(check_speculative(config, *model, layout, spec_from_env));
  if (config.kv_cache_bytes == 0) {
    const int64_t per_seq = layout.blocks_needed(config.max_model_len) * layout.block_bytes + 2 * layout.slot_bytes;
    const int64_t minimum = layout.blocks_needed(config.max_model_len) * layout.block_bytes +
                            2 * config.max_num_seqs * layout.slot_bytes;
    CacheMemory* mem = model->cache_memory();
    const int64_t budget = mem ? mem->budget_bytes() : 0;
    if (budget > 0) {
      // A device cache: what gpu_memory_utilization leaves, but no more than max_num_seqs
      // full-length sequences can use (the rest stays free for other programs).
      config.kv_cache_bytes = std::min(budget, std::max(minimum, per_seq * config.max_num_seqs));
    } else {
      config.kv_cache_bytes = std::max(minimum, std::min(kDefaultKvCap, per_seq * config.max_num_seqs));
    }
    config.kv_cache_bytes = std::max<int64_t>(config.kv_cache_bytes, 1);
  }
  KvCacheConfig kvc;
  kvc.kv_cache_bytes = config.kv_cache_bytes;
  kvc.max_num_seqs = config.max_num_seqs;
  kvc.max_model_len = config.max_model_len;
  kvc.enable_prefix_caching = config.enable_prefix_caching;
  kvc.memory = model->cache_memory();
  DI_ASSIGN_OR_RETURN(std::unique_ptr<KvCacheManager> kv, KvCacheManager::create(layout, kvc));

  auto impl = std::make_unique<Impl>();
  impl->info.model = mi;
  impl->info.config = config;
  impl->info.batch_invariant = config.deterministic;
  impl->info.invariant_kernels = invariant_kernels;
  impl->info.parallel = parallel;
  impl->info.num_kv_blocks = kv->num_blocks();
  impl->info.kv_block_bytes = kv->layout().block_bytes;
  impl->info.kv_slot_bytes = kv->layout().slot_bytes;
  impl->model = std::move(model);
  impl->token_text = std::move(token_text);
  log::info("kv cache: %lld blocks of %d tokens, %s (%s a block%s), %s", static_cast<long long>(kv->num_blocks()),
            config.block_size, log::format_bytes(static_cast<double>(kv->num_blocks()) * kv->layout().block_bytes).c_str(),
            log::format_bytes(static_cast<double>(kv->layout().block_bytes)).c_str(),
            kv->layout().slot_bytes > 0 ? (", " + log::format_bytes(static_cast<double>(kv->layout().slot_bytes)) + " a sequence slot").c_str() : "",
            kvc.memory ? "in device memory" : "in host memory");
  impl->kv = std::move(kv);
  SchedulerConfig sc;
  sc.max_num_seqs = config.max_num_seqs;
  sc.max_num_batched_tokens = config.max_num_batched_tokens;
  sc.deterministic = config.deterministic;
  sc.max_draft_tokens = config.num_speculative_tokens;
  impl->scheduler = std::make_unique<Scheduler>(sc, impl->kv.get());
  impl->sampler = std::make_unique<Sampler>(mi.vocab_size, mi.eos_token_ids);
  impl->runner = std::make_unique<ModelRunner>(impl->model.get(), impl->kv.get(), impl->sampler.get(),
                                               config.deterministic && !invariant_kernels);
  if (config.num_speculative_tokens > 0)
    impl->runner->enable_drafts({config.num_speculative_tokens, config.speculative_variable == 1, config.max_model_len});
  impl->seed_state = std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  impl->update_snapshot();
  Impl* p = impl.get();
  impl->output_thread = std::thread([p] { p->output_loop(); });
  impl->step_thread = std::thread([p] { p->step_loop(); });
  log::info("engine ready: max_model_len %lld, max_num_seqs %d, max_num_batched_tokens %lld, prefix caching %s",
            static_cast<long long>(config.max_model_len), static_cast<int>(config.max_num_seqs),
            static_cast<long long>(config.max_num_batched_tokens), config.enable_prefix_caching ? "on" : "off");
  if (config.num_speculative_tokens > 0)
    log::info("speculative decoding: MTP drafts of up to %d tokens, %s length", config.num_speculative_tokens,
              config.speculative_variable == 1 ? "variable" : "fixed");
  return std::unique_ptr<LLMEngine>(new LLMEngine(std::move(impl)));
}

LLMEngine::~LLMEngine() {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->info.config.dp_coordinator) impl_->info.config.dp_coordinator->wake();  // out of an idle wait
  impl_->step_thread.join();  // cancels what is left and stops the output thread last
  impl_->output_thread.join();
}

const EngineInfo& LLMEngine::info() const { return impl_->info; }
bool LLMEngine::has_token_text() const { return impl_->token_text != nullptr; }
std::string LLMEngine::metrics_json() const { return impl_->metrics.to_json(); }
std::string LLMEngine::metrics_prometheus() const { return impl_->metrics.to_prometheus(); }

KvCacheStats LLMEngine::kv_stats() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->kv_snapshot;
}

Result<std::shared_ptr<RequestStream>> LLMEngine::submit(std::vector<int32_t> prompt, SamplingParams params,
                                                         RequestStream::Callback callback,
                                                         std::unique_ptr<TokenConstraint> constraint) {
  const ModelInfo& mi = impl_->info.model;
  const EngineConfig& cfg = impl_->info.config;
  if (prompt.empty()) return Status::invalid_argument("prompt: expected at least one token id, got none");
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (prompt[i] < 0 || prompt[i] >= mi.vocab_size)
      return Status::invalid_argument("prompt[" + std::to_string(i) + "]: token id " + std::to_string(prompt[i]) +
                                      " is outside the vocabulary [0, " + std::to_string(mi.vocab_size) + ")");
  }
  DI_RETURN_IF_ERROR(params.validate(mi.vocab_size));
  const auto len = static_cast<int64_t>(prompt.size());
  // Compared as a difference: len + max_tokens overflows for max_tokens near INT64_MAX.
  const int64_t wanted = params.max_tokens > 0 ? params.max_tokens : 1;
  if (wanted > cfg.max_model_len - len)
    return Status::limit("prompt: " + std::to_string(len) + " tokens + max_tokens " + std::to_string(wanted) +
                         " exceed max_model_len " + std::to_string(cfg.max_model_len));
  if (params.n > cfg.max_num_seqs)
    return Status::limit("n: " + std::to_string(params.n) + " completions exceed max_num_seqs " +
                         std::to_string(cfg.max_num_seqs));
  if (!params.stop.empty() && !impl_->token_text)
    return Status::invalid_argument("stop: stop strings need the model's tokenizer, and none was loaded");
  if (!params.seed) {
    std::lock_guard<std::mutex> l(impl_->seed_mu);
    impl_->seed_state = kernels::rng_mix(impl_->seed_state);
    params.seed = impl_->seed_state;
  }

  auto req = std::make_shared<RequestState>();
  req->id = impl_->next_id.fetch_add(1);
  req->stream = std::make_shared<RequestStream>(req->id, std::move(callback));
  req->params = std::make_shared<const SamplingParams>(std::move(params));
  req->submitted = Clock::now();
  req->prompt_tokens = len;
  const SamplingParams& p = *req->params;
  for (int32_t i = 0; i < p.n; ++i) {
    auto seq = std::make_unique<Sequence>();
    seq->request_id = req->id;
    seq->index = i;
    seq->params = req->params;
    seq->seed = *p.seed;
    seq->num_prompt_tokens = len;
    if (i == 0) {
      seq->token_ids = prompt;
      seq->constraint = std::move(constraint);
    }
    req->seqs.push_back(std::move(seq));
    req->text.emplace_back(impl_->token_text.get(), p.skip_special_tokens, p.stop);
  }
  req->forks_pending = p.n > 1;
  req->out_finished.assign(p.n, false);
  req->out_tokens.assign(p.n, 0);
  req->last_token_at.assign(p.n, req->submitted);
  std::shared_ptr<RequestStream> stream = req->stream;
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    if (impl_->stopping) return Status::state("engine: shutting down");
    impl_->new_requests.push_back(std::move(req));
  }
  impl_->metrics.on_request_submitted();
  impl_->cv.notify_all();
  if (impl_->info.config.dp_coordinator) impl_->info.config.dp_coordinator->wake();
  return stream;
}

void LLMEngine::cancel(uint64_t request_id) {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    if (impl_->stopping) return;
    impl_->cancels.push_back(request_id);
  }
  impl_->cv.notify_all();
}

// ---- step thread ------------------------------------------------------------------------------

void LLMEngine::Impl::update_snapshot() {
  EngineGauges g;
  g.num_waiting = static_cast<int64_t>(scheduler->num_waiting());
  g.num_running = static_cast<int64_t>(scheduler->num_running());
  g.num_preemptions = scheduler->num_preemptions();
  g.kv = kv->stats();
  metrics.set_gauges(g);
  std::lock_guard<std::mutex> l(mu);
  kv_snapshot = g.kv;
}

void LLMEngine::Impl::finish_seq(RequestState& req, Sequence& seq, FinishReason reason, std::string error,
                                 std::vector<SeqEvent>& events) {
  if (seq.status == SequenceStatus::kFinished) return;
  scheduler->finish(&seq, reason);
  ++req.num_finished;
  SeqEvent ev;
  ev.req = live.at(req.id);
  ev.index = seq.index;
  ev.finish = reason;
  ev.error = std::move(error);
  ev.cached_prompt_tokens = seq.num_cached_prompt_tokens;
  events.push_back(std::move(ev));
}

bool LLMEngine::Impl::drain_inbox(bool block) {
  std::vector<std::shared_ptr<RequestState>> fresh;
  std::vector<uint64_t> cancelled;
  std::vector<std::pair<uint64_t, int32_t>> stopped;
  bool stop;
  {
    std::unique_lock<std::mutex> l(mu);
    if (block) {
      cv.wait(l, [&] {
        return stopping || !new_requests.empty() || !cancels.empty() || !stop_finishes.empty() ||
               scheduler->has_work();
      });
    }
    fresh.swap(new_requests);
    cancelled.swap(cancels);
    stopped.swap(stop_finishes);
    stop = stopping;
  }
  for (auto& req : fresh) {
    scheduler->add(req->seqs[0].get(), req->params->n - 1);
    live.emplace(req->id, std::move(req));
  }
  std::vector<SeqEvent> events;
  for (const auto& [id, index] : stopped) {
    auto it = live.find(id);
    if (it == live.end()) continue;
    RequestState& req = *it->second;
    Sequence& seq = *req.seqs[index];
    if (seq.status == SequenceStatus::kFinished) continue;
    // The output thread already delivered this completion's final chunk: finish silently.
    scheduler->finish(&seq, FinishReason::kStopSequence);
    ++req.num_finished;
  }
  if (stop) {
    for (const auto& [id, req] : live) cancelled.push_back(id);
  }
  for (uint64_t id : cancelled) {
    auto it = live.find(id);
    if (it == live.end()) continue;
    RequestState& req = *it->second;
    if (req.forks_pending) {
      scheduler->clear_reserve(req.seqs[0].get());
      req.forks_pending = false;
    }
    for (auto& seq : req.seqs) finish_seq(req, *seq, FinishReason::kCancelled, {}, events);
  }
  for (auto it = live.begin(); it != live.end();) {
    if (it->second->num_finished == static_cast<int32_t>(it->second->seqs.size())) it = live.erase(it);
    else ++it;
  }
  if (!events.empty()) push_events(std::move(events));
  return !stop;
}

void LLMEngine::Impl::commit_token(RequestState& req, Sequence& seq, Result<SampledToken>& r,
                                   std::vector<SeqEvent>& events) {
  if (!r.is_ok()) {
    finish_seq(req, seq, FinishReason::kError, r.status().message(), events);
    return;
  }
  const SamplingParams& p = *seq.params;
  const int32_t token = r->token;
  seq.append_token(token);
  SeqEvent ev;
  ev.req = live.at(req.id);
  ev.index = seq.index;
  ev.token = token;
  ev.cached_prompt_tokens = seq.num_cached_prompt_tokens;
  if (p.logprobs || p.top_logprobs > 0) {
    ev.logprob = r->logprob;
    ev.top_logprobs = std::move(r->top_logprobs);
  }
  FinishReason reason = FinishReason::kNone;
  std::string error;
  if (seq.constraint && !seq.constraint->accept_token(token)) {
    reason = FinishReason::kError;
    error = "constraint rejected token " + std::to_string(token);
  }
  const bool may_stop = seq.num_output_tokens() >= p.min_tokens;
  const auto& eos = sampler->eos_token_ids();
  if (reason == FinishReason::kNone && may_stop) {
    if ((!p.ignore_eos && std::find(eos.begin(), eos.end(), token) != eos.end()) ||
        std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), token) != p.stop_token_ids.end()) {
      reason = FinishReason::kStop;
      ev.suppress_text = true;
    }
  }
  if (reason == FinishReason::kNone &&
      ((p.max_tokens > 0 && seq.num_output_tokens() >= p.max_tokens) ||
       seq.num_tokens() >= info.config.max_model_len))
    reason = FinishReason::kLength;
  events.push_back(std::move(ev));
  if (reason != FinishReason::kNone) {
    scheduler->finish(&seq, reason);
    ++req.num_finished;
    events.back().finish = reason;
    events.back().error = std::move(error);
  }
}

// A request's first completion forks the others (n > 1) when its prompt is done: they draw
// their first token from the same logits row, each with its own RNG stream.
bool LLMEngine::Impl::forks_now(const RequestState& req, const Sequence& seq) const {
  return req.forks_pending && seq.index == 0 && seq.num_output_tokens() == 0;
}

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

bool LLMEngine::Impl::run_step(bool allow_prefill) {
  StepTiming& t = step_timing;
  t = StepTiming{};
  t.start = Clock::now();
  SchedulerOutput out = scheduler->schedule(allow_prefill);
  last_step_prefilled = false;
  if (out.empty()) return false;
  for (const ScheduledSequence& s : out.scheduled) last_step_prefilled = last_step_prefilled || s.seq->is_prefill();
  std::vector<SeqEvent> events;
  const Clock::time_point scheduled = Clock::now();
  t.schedule = seconds_between(t.start, scheduled);
  // The step's draws, in the order they are committed below: per sampling sequence, its forked
  // completions first, then itself.
  tasks.clear();
  for (size_t i = 0; i < out.scheduled.size(); ++i) {
    const ScheduledSequence& s = out.scheduled[i];
    if (!s.samples()) continue;
    Sequence& seq = *s.seq;
    RequestState& req = *live.at(seq.request_id);
    if (forks_now(req, seq)) {
      for (size_t c = 1; c < req.seqs.size(); ++c) {
        Sequence& child = *req.seqs[c];
        // The clone starts at the parent's state, so the parent's mask is its mask too.
        child.token_ids = seq.token_ids;
        if (seq.constraint) child.constraint = seq.constraint->clone();
        tasks.push_back({&child, static_cast<int32_t>(i)});
      }
    }
    tasks.push_back({&seq, static_cast<int32_t>(i)});
  }
  Status st = runner->execute(out, tasks, drawn);
  const Clock::time_point executed = Clock::now();
  const RunnerTiming& rt = runner->last_timing();
  // Forward: the model call, draws included where the model samples on its device; sample: host
  // draws and committing the tokens (below).
  t.forward = rt.forward_s + rt.draft_s;  // the draft layers are model time too
  t.prepare = std::max(0.0, seconds_between(scheduled, executed) - t.forward - rt.sample_s);
  int64_t prompt_tokens = 0, generated = 0;
  size_t k = 0;
  for (size_t i = 0; i < out.scheduled.size(); ++i) {
    const ScheduledSequence& s = out.scheduled[i];
    Sequence& seq = *s.seq;
    RequestState& req = *live.at(seq.request_id);
    if (!st.is_ok()) {
      finish_seq(req, seq, FinishReason::kError, st.message(), events);
      continue;
    }
    const bool samples = s.samples();
    scheduler->advance(s);
    // Prompt positions computed this step (a decode token, or output re-fed after a preemption,
    // is not a prompt token).
    prompt_tokens += std::max<int64_t>(0, std::min(s.start + s.num_tokens, seq.num_prompt_tokens) - s.start);
    if (!samples) continue;
    if (forks_now(req, seq)) {
      for (size_t c = 1; c < req.seqs.size(); ++c) {
        Sequence& child = *req.seqs[c];
        if (kv->fork(seq, child)) scheduler->add_running(&child);
        else scheduler->add(&child);
        commit_token(req, child, drawn[k++], events);
        ++generated;
      }
      scheduler->clear_reserve(&seq);
      req.forks_pending = false;
    }
    // Accepted draft tokens first: each is in the cache already, so it counts as computed once
    // committed (and the sequence may finish on any of them).
    for (const SampledToken& d : runner->accepted_drafts(k)) {
      Result<SampledToken> r = d;
      commit_token(req, seq, r, events);
      ++generated;
      if (seq.status == SequenceStatus::kFinished) break;
      ++seq.num_computed_tokens;
      kv->commit(seq);
    }
    if (seq.status != SequenceStatus::kFinished) {
      commit_token(req, seq, drawn[k], events);
      ++generated;
    }
    ++k;
    if (s.num_draft > 0 && seq.status != SequenceStatus::kFinished) kv->trim(seq);
  }
  if (st.is_ok() && runner->last_verified() > 0) metrics.on_drafts(runner->last_drafts());
  if (!st.is_ok()) {
    // Completions waiting to fork from a failed parent fail with it.
    for (const ScheduledSequence& s : out.scheduled) {
      RequestState& req = *live.at(s.seq->request_id);
      if (!req.forks_pending) continue;
      req.forks_pending = false;
      for (auto& seq : req.seqs) finish_seq(req, *seq, FinishReason::kError, st.message(), events);
    }
  }
  for (auto it = live.begin(); it != live.end();) {
    if (it->second->num_finished == static_cast<int32_t>(it->second->seqs.size())) it = live.erase(it);
    else ++it;
  }
  metrics.on_step(prompt_tokens, generated);
  // The output phase starts here; step_loop closes it.
  t.end = Clock::now();
  t.sample = runner->last_timing().sample_s + seconds_between(executed, t.end);  // host draws + committing
  if (!events.empty()) push_events(std::move(events));
  return true;
}

void LLMEngine::Impl::step_loop() {
  DpCoordinator* dp = info.config.dp_coordinator.get();
  const int32_t rank = info.config.dp_rank;
  for (;;) {
    // Read before draining: work that lands after the drain changes it, so an idle round's
    // wait below returns at once instead of sleeping on a request nobody has seen.
    const uint64_t epoch = dp ? dp->epoch() : 0;
    if (!drain_inbox(/*block=*/dp == nullptr)) break;
    bool allow_prefill = true;
    int64_t round = 0;
    if (dp) {
      const DpRound r = dp->step(rank, {scheduler->has_prefill_work(), scheduler->has_work()}, epoch);
      if (r.decision.idle) {
        if (!r.rerun) dp->wait_for_work(epoch);
        continue;
      }
      allow_prefill = r.decision.allow_prefill;
      round = r.index;
    }
    const bool ran = run_step(allow_prefill);
    // A rank with nothing schedulable under the vote joins with an empty batch. In one process
    // there is no collective to keep in step, so the empty batch runs no forward.
    if (dp) dp->record(rank, {round, allow_prefill, ran && last_step_prefilled, !ran});
    update_snapshot();
    if (!info.config.async_scheduling) {
      // Synchronous mode: the output of this step (stop strings included) is fully processed
      // before the next step is scheduled.
      std::unique_lock<std::mutex> l(out_mu);
      out_cv.wait(l, [&] { return batches_done == batches_pushed; });
    }
    if (ran) {
      const Clock::time_point now = Clock::now();
      step_timing.output = seconds_between(step_timing.end, now);
      step_timing.end = now;
      metrics.on_step_timing(step_timing);
    }
  }
  if (dp) dp->leave(rank);
  update_snapshot();
  {
    std::lock_guard<std::mutex> l(out_mu);
    out_stop = true;
  }
  out_cv.notify_all();
}

void LLMEngine::Impl::push_events(std::vector<SeqEvent> events) {
  {
    std::lock_guard<std::mutex> l(out_mu);
    out_queue.push_back(std::move(events));
    ++batches_pushed;
  }
  out_cv.notify_all();
}

}  // namespace di::engine
