// ModelRunner: batch assembly, the forward call, the step's draws and speculative decoding's
// verification and drafting.
#include "engine/model_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>

#include "engine/spec/rejection.h"

namespace di::engine {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The masks of scheduled sequences [first, first + n) that sample this step and carry a
// constraint; records which rows the model masked.
class ScheduledMasks final : public LogitsMaskSource {
 public:
  ScheduledMasks(const ScheduledSequence* first, size_t n, uint8_t* applied) : first_(first), n_(n), applied_(applied) {}
  void fill(uint32_t* words, int64_t words_per_row, uint8_t* masked) override {
    for (size_t i = 0; i < n_; ++i) {
      const ScheduledSequence& s = first_[i];
      // A verified draft's rows are masked on the host (each by the constraint state after the
      // drafts before it); the mask the model applies is for the last row only.
      masked[i] = s.samples() && s.seq->constraint && s.num_draft == 0 ? 1 : 0;
      if (masked[i]) s.seq->constraint->fill_mask(words + static_cast<int64_t>(i) * words_per_row, words_per_row);
      applied_[i] = masked[i];
    }
  }

 private:
  const ScheduledSequence* first_;
  size_t n_;
  uint8_t* applied_;
};

bool any_constrained(const ScheduledSequence* first, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (first[i].samples() && first[i].seq->constraint) return true;
  return false;
}

// A sequence's state with tokens tried on top of it (accepted ones not yet committed, draft
// tokens): appended to its tokens and its constraint, and taken back by undo().
struct TriedTokens {
  Sequence* seq = nullptr;
  int32_t appended = 0;
  int32_t constrained = 0;
  bool push(int32_t token) {
    seq->append_token(token);
    ++appended;
    if (!seq->constraint) return true;
    if (!seq->constraint->accept_token(token)) return false;
    ++constrained;
    return true;
  }
  void undo() {
    for (; appended > 0; --appended) seq->pop_token();
    if (constrained > 0 && seq->constraint) seq->constraint->rollback(constrained);
    constrained = 0;
  }
};

// The confidence of the draft tokens a step verified (the scheduler may verify fewer than drafted).
std::span<const double> verified_confidence(const Sequence& seq, int32_t num_draft) {
  return std::span<const double>(seq.draft_confidence)
      .first(std::min(seq.draft_confidence.size(), static_cast<size_t>(std::max(0, num_draft))));
}

// Chooses the draft tokens of one propose_drafts() call (see DraftChooser).
class Chooser final : public DraftChooser {
 public:
  struct Input {
    TriedTokens tried;
    int32_t max_drafts = 0;
  };
  Chooser(Sampler* sampler, const SpecCostModel* cost, const DraftCalibration* calibration, bool variable,
          int32_t batch_seqs)
      : sampler_(sampler), cost_(cost), calibration_(calibration), variable_(variable), batch_seqs_(batch_seqs) {}
  std::vector<Input> inputs;
  int64_t steps = 0;

  int32_t choose(size_t s, int32_t j, std::span<const float> logits) override {
    ++steps;
    Input& in = inputs[s];
    Sequence& seq = *in.tried.seq;
    if (j >= in.max_drafts) return -1;
    const int64_t V = sampler_->vocab_size();
    const std::span<const float> row = sampler_->masked_row(logits, seq);
    SampleSpec spec = make_sample_spec(seq, 0, sampler_->eos_token_ids(), V);
    int32_t token;
    double confidence;
    if (spec.greedy()) {
      // The confidence is the draft head's own probability of its argmax (temperature 1).
      spec.logprobs = true;
      spec.top_logprobs = 0;
      Result<SampledToken> r = sample_logits(row, spec, work_);
      if (!r.is_ok()) return -1;
      token = r->token;
      confidence = std::exp(static_cast<double>(r->logprob));
    } else {
      if (!draw_distribution(row, spec, work_, q_).is_ok()) return -1;
      token = draw_from(q_, spec_uniform(SpecDraw::kDraft, spec.seed, spec.index, spec.position));
      if (token < 0) return -1;
      confidence = q_[token];
    }
    return take(in, token, confidence, !spec.greedy());
  }

  // Draft j of input s picked greedily by the model (on its device), with the draft head's
  // probability of it: kept or refused as choose() keeps or refuses its own greedy pick.
  int32_t offer(size_t s, int32_t j, int32_t token, double confidence) {
    Input& in = inputs[s];
    if (j >= in.max_drafts) return -1;
    return take(in, token, confidence, false);
  }

 private:
  // The draft's length rule over the sequence's draft so far and this token, then the token into
  // the sequence (and q_, a sampled draft's distribution, into its draft_probs).
  int32_t take(Input& in, int32_t token, double confidence, bool sampled) {
    Sequence& seq = *in.tried.seq;
    seq.draft_confidence.push_back(confidence);
    if ((variable_ && !draft_worth_extending(*cost_, *calibration_, seq.draft_confidence, batch_seqs_)) ||
        !in.tried.push(token)) {
      seq.draft_confidence.pop_back();
      return -1;
    }
    seq.draft_tokens.push_back(token);
    if (sampled) seq.draft_probs.insert(seq.draft_probs.end(), q_.begin(), q_.end());
    return token;
  }

  Sampler* sampler_;
  const SpecCostModel* cost_;
  const DraftCalibration* calibration_;
  bool variable_;
  int32_t batch_seqs_;
  std::vector<float> work_;
  std::vector<double> q_;
};

}  // namespace

Result<SampledToken> ModelRunner::verify(Sequence& seq, const float* rows, int32_t k,
                                         std::vector<SampledToken>& accepted) {
  const auto V = static_cast<size_t>(sampler_->vocab_size());
  TriedTokens tried{&seq};
  const bool greedy = make_sample_spec(seq, 0, sampler_->eos_token_ids(), static_cast<int64_t>(V)).greedy();
  const bool has_q = seq.draft_probs.size() >= static_cast<size_t>(k) * V;
  Result<SampledToken> out = Status::internal("verify: no row decided");
  for (int32_t j = 0;; ++j) {
    const std::span<const float> row(rows + static_cast<size_t>(j) * V, V);
    if (j == k) {  // every draft kept: the next token is drawn as without speculation
      out = sampler_->sample(row, seq);
      break;
    }
    const int32_t draft = seq.draft_tokens[j];
    Result<SampledToken> r = Status::internal("");
    bool keep;
    if (greedy) {
      r = sampler_->sample(row, seq);
      keep = r.is_ok() && r->token == draft;
    } else {
      const Status st = sampler_->distribution(row, seq, probs_);
      if (!st.is_ok()) {
        out = st;
        break;
      }
      const std::span<const float> q = has_q ? std::span<const float>(seq.draft_probs.data() + j * V, V)
                                             : std::span<const float>();
      const DraftVerdict v = verify_draft(probs_, q, draft, seq.seed, static_cast<uint64_t>(seq.index),
                                          static_cast<uint64_t>(seq.num_tokens()));
      r = sampler_->describe(row, seq, v.token);
      keep = v.accepted && r.is_ok();
    }
    if (!keep) {
      out = std::move(r);
      break;
    }
    accepted.push_back(std::move(*r));
    // The target allowed the draft, so its constraint takes it.
    if (!tried.push(draft)) {
      accepted.pop_back();
      out = Status::internal("constraint rejected draft token " + std::to_string(draft) + " it had allowed");
      break;
    }
  }
  tried.undo();
  return out;
}

int32_t ModelRunner::draft_room(const Sequence& seq) const {
  // The draft may not run past max_tokens or max_model_len (one token is the next draw).
  const SamplingParams& p = *seq.params;
  int64_t room = draft_.max_model_len - seq.num_tokens() - 1;
  if (p.max_tokens > 0) room = std::min(room, p.max_tokens - seq.num_output_tokens() - 1);
  return static_cast<int32_t>(std::clamp<int64_t>(room, 0, draft_.max_draft_tokens));
}

bool ModelRunner::greedy_on_device(const ScheduledSequence* first, size_t n, std::span<const SampleTask> tasks,
                                   int32_t row_offset) {
  if (!propose_now_ || !model_->verifies_on_device() || tasks.size() != n) return false;
  const int64_t V = model_->info().vocab_size;
  greedy_.assign(n, GreedyVerify{});
  for (size_t i = 0; i < n; ++i) {
    const ScheduledSequence& s = first[i];
    if (!s.samples() || s.num_tokens != 1 || s.seq->constraint || tasks[i].seq != s.seq ||
        tasks[i].row - row_offset != static_cast<int32_t>(i))
      return false;
    SampleSpec spec = make_sample_spec(*s.seq, 0, sampler_->eos_token_ids(), V);
    if (!spec.greedy()) return false;
    // No edit now means none at the draft's rows either: penalties and biases edit every row, and
    // min_tokens, once reached, stays reached.
    for (const auto& e : spec.edits)
      if (!e.empty()) return false;
    greedy_[i].num_draft = static_cast<int32_t>(s.num_draft);
    greedy_[i].spec = std::move(spec);
  }
  return true;
}

Status ModelRunner::run_greedy_on_device(const ForwardBatch& batch, const ScheduledSequence* first, size_t n,
                                         int32_t row_offset, std::vector<Result<SampledToken>>& results) {
  const size_t task_offset = results.size();
  auto t0 = Clock::now();
  DI_RETURN_IF_ERROR(model_->verify_greedy(batch, greedy_));
  const double forward_s = seconds_since(t0);
  timing_.forward_s += forward_s;
  int64_t fed = 0, rows = 0;
  for (const SequenceInput& in : batch.seqs) fed += in.num_tokens;
  // The draws and the draft layer's pass over the known positions ran in the forward's time: the
  // pass (as the model timed it on its device) is the first draft token's draft step.
  const double pass_s = std::clamp(model_->last_draft_pass_seconds(), 0.0, forward_s);
  cost_.observe_forward(fed, forward_s - pass_s);
  if (pass_s > 0) cost_.observe_draft_steps(1, pass_s);
  t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    const ScheduledSequence& s = first[i];
    GreedyVerify& v = greedy_[i];
    accepted_.emplace_back();
    for (int32_t j = 0; j < v.accepted; ++j) {
      if (!v.drawn[j].is_ok()) return Status::internal("verify_greedy: an accepted draft's draw failed");
      accepted_.back().push_back(std::move(*v.drawn[j]));
    }
    results.push_back(std::move(v.drawn[v.accepted]));
    rows += v.accepted + 1;
    if (s.num_draft == 0) continue;
    verified_ += s.num_draft;
    num_accepted_ += v.accepted;
    drafts_.push_back({s.num_draft, v.accepted});
    calibration_.observe(verified_confidence(*s.seq, s.num_draft), v.accepted);
    // The rejected positions' ring rows, the draft layer's among them, as before the step.
    const int64_t from = s.start + s.num_tokens;
    DI_RETURN_IF_ERROR(kv_->restore_ring_entries(*s.seq, from, from + s.num_draft, from + v.accepted,
                                                 saved_rings_[row_offset + i]));
  }
  const double sample_s = seconds_since(t0);
  timing_.sample_s += sample_s;
  cost_.observe_rows(rows, sample_s);
  // The next drafts: the model picked each first token; the chooser keeps it or ends the draft
  // there, and asks for the rest when a draft is longer.
  t0 = Clock::now();
  Chooser chooser(sampler_, &cost_, &calibration_, draft_.variable, step_seqs_);
  std::vector<DraftInput> inputs(n);
  std::vector<int32_t> tokens(n, -1);
  bool more = false;
  for (size_t i = 0; i < n; ++i) {
    Sequence& seq = *first[i].seq;
    seq.draft_tokens.clear();
    seq.draft_probs.clear();
    seq.draft_confidence.clear();
    Chooser::Input in;
    in.tried.seq = &seq;
    const Result<SampledToken>& r = results[task_offset + i];
    if (r.is_ok()) {
      bool ok = true;
      for (const SampledToken& a : accepted_[task_offset + i]) ok = ok && in.tried.push(a.token);
      ok = ok && in.tried.push(r->token);
      in.max_drafts = ok ? draft_room(seq) : 0;
    }
    chooser.inputs.push_back(std::move(in));
    DraftInput& d = inputs[i];
    d.batch_index = static_cast<int32_t>(i);
    d.cache = batch.seqs[i].cache;
    d.start_pos = first[i].start;
    d.num_positions = greedy_[i].accepted + 1;
    d.max_drafts = chooser.inputs[i].max_drafts;
    const Result<SampledToken>& pick = greedy_[i].draft;
    if (r.is_ok() && pick.is_ok())
      tokens[i] = chooser.offer(i, 0, pick->token, std::exp(static_cast<double>(pick->logprob)));
    more |= tokens[i] >= 0 && d.max_drafts > 1;
  }
  Status st = Status::ok();
  if (more) st = model_->extend_drafts(inputs, tokens, chooser);
  for (Chooser::Input& in : chooser.inputs) in.tried.undo();
  const double draft_s = seconds_since(t0);
  timing_.draft_s += draft_s;
  if (chooser.steps > 0) cost_.observe_draft_steps(chooser.steps, draft_s);
  return st;
}

Status ModelRunner::propose(const ForwardBatch& batch, const ScheduledSequence* first, size_t n,
                            std::span<const SampleTask> tasks, size_t task_offset,
                            std::vector<Result<SampledToken>>& results) {
  const auto t0 = Clock::now();
  Chooser chooser(sampler_, &cost_, &calibration_, draft_.variable, step_seqs_);
  std::vector<DraftInput> inputs;
  std::vector<std::vector<int32_t>> next(n);
  for (size_t i = 0; i < n; ++i) {
    const ScheduledSequence& s = first[i];
    Sequence& seq = *s.seq;
    std::vector<int32_t>& nx = next[i];
    // The token after each fed position; a chunk short of the end knows its last one's too.
    const int64_t known_end = s.start + s.num_tokens + (s.samples() ? 0 : 1);
    nx.assign(seq.token_ids.begin() + s.start + 1, seq.token_ids.begin() + known_end);
    Chooser::Input in;
    in.tried.seq = &seq;
    if (s.samples()) {
      // The token after the last fed one is this step's draw (after the drafts it accepted).
      size_t t = 0;
      while (t < tasks.size() && tasks[t].seq != &seq) ++t;
      if (t == tasks.size() || !results[task_offset + t].is_ok()) continue;
      std::vector<int32_t> fresh;
      for (const SampledToken& a : accepted_[task_offset + t]) fresh.push_back(a.token);
      fresh.push_back(results[task_offset + t]->token);
      nx.insert(nx.end(), fresh.begin(), fresh.end());
      seq.draft_tokens.clear();
      seq.draft_probs.clear();
      seq.draft_confidence.clear();
      bool ok = true;
      for (int32_t tok : fresh) ok = ok && in.tried.push(tok);
      in.max_drafts = ok ? draft_room(seq) : 0;
    }
    if (nx.empty()) continue;
    DraftInput d;
    d.batch_index = static_cast<int32_t>(i);
    d.cache = batch.seqs[i].cache;
    d.start_pos = s.start;
    d.num_positions = static_cast<int32_t>(nx.size());
    d.next_tokens = nx.data();
    d.max_drafts = in.max_drafts;
    inputs.push_back(d);
    chooser.inputs.push_back(std::move(in));
  }
  Status st = model_->propose_drafts(inputs, chooser);
  for (Chooser::Input& in : chooser.inputs) in.tried.undo();
  const double s = seconds_since(t0);
  timing_.draft_s += s;
  cost_.observe_draft_steps(chooser.steps, s);
  return st;
}

// One forward over scheduled sequences [first, first + n) (their logits rows start at
// `row_offset` in the step's numbering) and the draws of `tasks`, all of which read those rows.
Status ModelRunner::run(const ForwardBatch& batch, const ScheduledSequence* first, size_t n,
                        std::span<const SampleTask> tasks, int32_t row_offset,
                        std::vector<Result<SampledToken>>& results) {
  const auto vocab = static_cast<size_t>(model_->info().vocab_size);
  masked_.assign(n, 0);
  ScheduledMasks masks(first, n, masked_.data());
  ForwardBatch b = batch;
  if (model_->applies_logits_masks() && any_constrained(first, n)) b.masks = &masks;
  // With drafting on, a greedy decode step on a device model draws, verifies and drafts there
  // (one wait); any other step gets its logits rows (the verify rows, one row for the rest;
  // forward() copies only those) and the host samples: the rejection rule, the constraints and
  // the draft chooser read whole rows.
  if (draft_.max_draft_tokens > 0 && greedy_on_device(first, n, tasks, row_offset))
    return run_greedy_on_device(b, first, n, row_offset, results);
  const bool on_device = model_->samples_on_device() && draft_.max_draft_tokens == 0;
  const size_t task_offset = results.size();
  auto t0 = Clock::now();
  if (on_device) {
    specs_.clear();
    for (const SampleTask& t : tasks)
      specs_.push_back(make_sample_spec(*t.seq, t.row - row_offset, sampler_->eos_token_ids(),
                                        static_cast<int64_t>(vocab)));
    timing_.prepare_s += seconds_since(t0);
    t0 = Clock::now();
    std::vector<Result<SampledToken>> drawn;
    DI_RETURN_IF_ERROR(model_->forward_sample(b, specs_, drawn));
    timing_.forward_s += seconds_since(t0);
    if (drawn.size() != tasks.size()) return Status::internal("forward_sample: wrong number of draws");
    for (auto& r : drawn) {
      results.push_back(std::move(r));
      accepted_.emplace_back();  // device models draft nothing: no accepted drafts to commit first
    }
    return Status::ok();
  }
  DI_RETURN_IF_ERROR(model_->forward(b, logits_));
  const double forward_s = seconds_since(t0);
  timing_.forward_s += forward_s;
  std::vector<size_t> row_start(n + 1, 0);
  int64_t fed = 0;
  for (size_t i = 0; i < n; ++i) {
    row_start[i + 1] = row_start[i] + (b.seqs[i].all_logits ? static_cast<size_t>(b.seqs[i].num_tokens) : 1);
    fed += b.seqs[i].num_tokens;
  }
  cost_.observe_forward(fed, forward_s);
  if (logits_.size() != row_start[n] * vocab)
    return Status::internal("forward: expected " + std::to_string(row_start[n] * vocab) + " logits, got " +
                            std::to_string(logits_.size()));
  t0 = Clock::now();
  int64_t rows_drawn = 0;
  for (const SampleTask& t : tasks) {
    const size_t i = static_cast<size_t>(t.row - row_offset);
    const ScheduledSequence& s = first[i];
    accepted_.emplace_back();
    if (s.num_draft > 0 && t.seq == s.seq) {
      Sequence& seq = *s.seq;
      results.push_back(verify(seq, logits_.data() + row_start[i] * vocab, s.num_draft, accepted_.back()));
      const auto kept = static_cast<int64_t>(accepted_.back().size());
      rows_drawn += kept + 1;
      verified_ += s.num_draft;
      num_accepted_ += kept;
      drafts_.push_back({s.num_draft, static_cast<int32_t>(kept)});
      calibration_.observe(verified_confidence(seq, s.num_draft), static_cast<int32_t>(kept));
      const int64_t from = s.start + s.num_tokens;
      DI_RETURN_IF_ERROR(
          kv_->restore_ring_entries(seq, from, from + s.num_draft, from + kept, saved_rings_[row_offset + i]));
      continue;
    }
    const size_t row = row_start[i + 1] - 1;
    ++rows_drawn;
    results.push_back(sampler_->sample(std::span<const float>(logits_.data() + row * vocab, vocab), *t.seq,
                                       masked_[i] != 0));
  }
  const double sample_s = seconds_since(t0);
  timing_.sample_s += sample_s;
  cost_.observe_rows(rows_drawn, sample_s);
  if (propose_now_) {
    DI_RETURN_IF_ERROR(propose(b, first, n, tasks, task_offset, results));
  } else {
    // No draft this step: one proposed before would be for positions the sequence has moved past.
    for (size_t i = 0; i < n; ++i)
      if (first[i].samples()) {
        first[i].seq->draft_tokens.clear();
        first[i].seq->draft_probs.clear();
        first[i].seq->draft_confidence.clear();
      }
  }
  return Status::ok();
}

Status ModelRunner::execute(const SchedulerOutput& out, std::span<const SampleTask> tasks,
                            std::vector<Result<SampledToken>>& results) {
  timing_ = {};
  verified_ = num_accepted_ = 0;
  drafts_.clear();
  const auto t0 = Clock::now();
  results.clear();
  results.reserve(tasks.size());
  accepted_.clear();
  accepted_.reserve(tasks.size());
  const size_t n = out.scheduled.size();
  step_seqs_ = static_cast<int32_t>(n);
  // The variable length pauses drafting while even a draft certain to be accepted would not pay
  // for its steps (the draft layer's pass over every new position included), re-measuring now
  // and then. A paused draft layer misses those positions in its ring, which costs acceptance
  // for a while after it resumes, never correctness.
  ++step_count_;
  propose_now_ = draft_.max_draft_tokens > 0;
  if (propose_now_ && draft_.variable && step_count_ % kProbeEvery != 0) {
    const double certain = 1.0;
    propose_now_ = draft_worth_extending(cost_, calibration_, std::span<const double>(&certain, 1), step_seqs_);
  }
  std::vector<PagedSequenceCache> views;
  views.reserve(n);
  std::vector<std::vector<int32_t>> fed(n);
  saved_rings_.resize(n);
  ForwardBatch batch;
  for (size_t i = 0; i < n; ++i) {
    const ScheduledSequence& s = out.scheduled[i];
    views.push_back(kv_->cache_view(*s.seq));
    SequenceInput in;
    in.tokens = s.seq->token_ids.data() + s.start;
    in.num_tokens = static_cast<int32_t>(s.num_tokens);
    in.start_pos = s.start;
    in.cache = &views.back();
    in.keep_hidden = propose_now_;
    if (s.num_draft > 0) {
      // The draft rides after the last token; the target's row for each position decides it.
      fed[i].assign(in.tokens, in.tokens + s.num_tokens);
      fed[i].insert(fed[i].end(), s.seq->draft_tokens.begin(), s.seq->draft_tokens.begin() + s.num_draft);
      in.tokens = fed[i].data();
      in.num_tokens += s.num_draft;
      in.all_logits = true;
      const int64_t from = s.start + s.num_tokens;
      DI_RETURN_IF_ERROR(kv_->save_ring_entries(*s.seq, from, from + s.num_draft, saved_rings_[i]));
    }
    batch.seqs.push_back(in);
  }
  timing_.prepare_s += seconds_since(t0);
  try {
    if (!per_sequence_) return run(batch, out.scheduled.data(), n, tasks, 0, results);
    // Tasks come grouped by row, rows ascending.
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      ForwardBatch one;
      one.seqs.push_back(batch.seqs[i]);
      size_t end = k;
      while (end < tasks.size() && tasks[end].row == static_cast<int32_t>(i)) ++end;
      DI_RETURN_IF_ERROR(run(one, out.scheduled.data() + i, 1, tasks.subspan(k, end - k), static_cast<int32_t>(i),
                             results));
      k = end;
    }
    if (k != tasks.size()) return Status::internal("model runner: sample tasks out of row order");
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory("forward: out of memory");
  } catch (const std::exception& e) {
    return Status::internal(std::string("forward: ") + e.what());
  }
  return Status::ok();
}

}  // namespace di::engine
