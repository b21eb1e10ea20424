// Matcher: the mask is the union over stack tops of the node's precomputed accepted tokens, plus
// the node's uncertain tokens checked against the real frames (sharing prefixes in byte order).
#include "engine/constrain/matcher.h"

#include <algorithm>
#include <cstring>

namespace di::engine::constrain {

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)), pda_(grammar_->grammar()) {
  reset();
}

void Matcher::reset() {
  pool_.clear();
  history_.clear();
  State s;
  s.can_end = pda_.start(pool_, s.tops);
  s.pool_size = pool_.size();
  history_.push_back(std::move(s));
}

bool Matcher::advance(const State& from, std::string_view bytes, State* to) {
  if (from.terminated) return false;
  std::vector<StackTop> cur = from.tops, next;
  bool bottom = from.can_end;
  for (char c : bytes) {
    if (cur.empty()) return false;
    bottom = pda_.step(pool_, cur, uint8_t(c), next);
    std::swap(cur, next);
  }
  // A dead end after a byte means that byte was refused. Zero bytes refuse nothing, even from a
  // state with no way on (a grammar that matches nothing): the step is then the identity.
  if (!bytes.empty() && cur.empty() && !bottom) return false;
  to->tops = std::move(cur);
  to->can_end = bottom;
  to->terminated = false;
  to->pool_size = pool_.size();
  return true;
}

Status Matcher::accept_bytes(std::string_view bytes) {
  State next;
  const size_t mark = pool_.size();
  if (!advance(history_.back(), bytes, &next)) {
    pool_.truncate(mark);
    return Status::invalid_argument("constraint: the grammar does not allow " + std::to_string(bytes.size()) +
                                    " bytes here");
  }
  history_.push_back(std::move(next));
  return Status::ok();
}

bool Matcher::can_accept_bytes(std::string_view bytes) {
  State next;
  const size_t mark = pool_.size();
  bool ok = advance(history_.back(), bytes, &next);
  pool_.truncate(mark);
  return ok;
}

Status Matcher::accept_token(uint32_t id) {
  const TokenVocabulary& v = grammar_->vocab();
  if (id >= v.size()) return Status::invalid_argument("constraint: token id " + std::to_string(id) + " out of range");
  const State& cur = history_.back();
  if (cur.terminated) return Status::state("constraint: token " + std::to_string(id) + " after the end of the output");
  if (v.is_eos(id)) {
    if (!cur.can_end) return Status::invalid_argument("constraint: end of sequence before the output is complete");
    State s;
    s.terminated = true;
    s.pool_size = pool_.size();
    history_.push_back(std::move(s));
    return Status::ok();
  }
  if (v.is_special(id) || v.token(id).empty()) {
    return Status::invalid_argument("constraint: special token " + std::to_string(id) + " is not allowed here");
  }
  State next;
  const size_t mark = pool_.size();
  if (!advance(cur, v.token(id), &next)) {
    pool_.truncate(mark);
    return Status::invalid_argument("constraint: token " + std::to_string(id) + " is not allowed here");
  }
  history_.push_back(std::move(next));
  return Status::ok();
}

Status Matcher::rollback(uint32_t k) {
  if (k > num_steps()) {
    return Status::invalid_argument("constraint: rollback of " + std::to_string(k) + " steps, only " +
                                    std::to_string(num_steps()) + " taken");
  }
  history_.resize(history_.size() - k);
  // Frames pushed after the surviving state are referenced by nothing any more.
  pool_.truncate(history_.back().pool_size);
  return Status::ok();
}

uint32_t Matcher::fill_mask(uint32_t* words) {
  const TokenVocabulary& v = grammar_->vocab();
  const uint32_t nw = v.mask_words();
  std::memset(words, 0, nw * sizeof(uint32_t));
  const State& cur = history_.back();
  uint32_t count = 0;
  auto set = [&](uint32_t id) {
    uint32_t& w = words[id >> 5];
    uint32_t bit = 1u << (id & 31);
    if (!(w & bit)) {
      w |= bit;
      ++count;
    }
  };
  if (cur.terminated || cur.can_end) {
    for (uint32_t id : v.eos_ids()) set(id);
  }
  if (cur.terminated) return count;

  const size_t mark = pool_.size();
  std::vector<uint32_t> nodes_done;
  for (const StackTop& top : cur.tops) {
    const NodeTokenSets& sets = grammar_->node_sets(top.node);
    if (std::find(nodes_done.begin(), nodes_done.end(), top.node) == nodes_done.end()) {
      nodes_done.push_back(top.node);
      if (!sets.accepted_bits.empty()) {
        for (uint32_t i = 0; i < nw; ++i) {
          uint32_t add = sets.accepted_bits[i] & ~words[i];
          words[i] |= add;
          count += static_cast<uint32_t>(__builtin_popcount(add));
        }
      } else {
        for (uint32_t id : sets.accepted_ids) set(id);
      }
    }
    if (!sets.uncertain.empty()) check_uncertain(top, sets.uncertain, words, &count);
  }
  pool_.truncate(mark);
  return count;
}

// Checks tokens that leave the top's rule against the real frames. Consecutive ids are in byte
// order, so the states of a shared prefix are reused.
void Matcher::check_uncertain(const StackTop& top, const std::vector<uint32_t>& ids, uint32_t* words, uint32_t* count) {
  const TokenVocabulary& v = grammar_->vocab();
  if (depth_states_.empty()) depth_states_.resize(1);
  depth_states_[0] = {top};
  size_t valid = 0;  // depths 0..valid hold states of `prev`'s prefix
  const std::string* prev = nullptr;
  for (uint32_t id : ids) {
    const std::string& s = v.token(id);
    uint32_t& w = words[id >> 5];
    const uint32_t bit = 1u << (id & 31);
    if (w & bit) continue;
    size_t lcp = 0;
    if (prev) {
      while (lcp < s.size() && lcp < prev->size() && s[lcp] == (*prev)[lcp]) ++lcp;
    }
    size_t d = std::min(lcp, valid);
    if (depth_states_.size() < s.size() + 1) depth_states_.resize(s.size() + 1);
    if (depth_bottom_.size() < s.size() + 1) depth_bottom_.resize(s.size() + 1, 0);
    bool ok = true;
    while (d < s.size()) {
      if (depth_states_[d].empty()) {
        ok = false;
        break;
      }
      depth_bottom_[d + 1] = pda_.step(pool_, depth_states_[d], uint8_t(s[d]), depth_states_[d + 1]);
      ++d;
    }
    valid = d;
    prev = &s;
    if (ok && (!depth_states_[s.size()].empty() || depth_bottom_[s.size()])) {
      w |= bit;
      ++*count;
    }
  }
}

}  // namespace di::engine::constrain
