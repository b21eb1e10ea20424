// Pda: closure (calls push a frame, final nodes pop one) and the one-byte step.
#include "engine/constrain/pda.h"

#include <algorithm>

namespace di::engine::constrain {

namespace {
template <class V, class T>
bool contains(const V& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

bool Pda::close(FramePool& pool, StackTop t, std::vector<StackTop>& out) {
  begin_();
  return close_(pool, t, out);
}

bool Pda::close_(FramePool& pool, StackTop t0, std::vector<StackTop>& out) {
  bool bottom = false;
  work_.clear();
  work_.push_back(t0);
  while (!work_.empty()) {
    StackTop t = work_.back();
    work_.pop_back();
    if (contains(visited_, t)) continue;
    visited_.push_back(t);
    const GrammarNode& n = g_.node(t.node);
    if (n.num_byte_edges > 0 && !contains(out, t)) out.push_back(t);
    const CallEdge* ce = g_.call_edges(n);
    for (uint32_t i = 0; i < n.num_call_edges; ++i) {
      StackTop ret{ce[i].target, t.parent};
      uint32_t f = UINT32_MAX;
      for (auto& [k, id] : frames_) {
        if (k == ret) {
          f = id;
          break;
        }
      }
      if (f == UINT32_MAX) {
        f = pool.push(ret.node, ret.parent);
        frames_.push_back({ret, f});
      }
      work_.push_back(StackTop{g_.rules()[ce[i].rule].start, f});
    }
    if (n.final) {
      if (t.parent == FramePool::kBottom) {
        bottom = true;
      } else {
        work_.push_back(pool.frame(t.parent));
      }
    }
  }
  return bottom;
}

bool Pda::step(FramePool& pool, const std::vector<StackTop>& in, uint8_t b, std::vector<StackTop>& out) {
  out.clear();
  // Fast path: one top moving to a node that neither calls nor returns (the common case inside a
  // rule, e.g. string characters) needs no closure.
  if (in.size() == 1) {
    uint32_t next = g_.next(in[0].node, b);
    if (next == UINT32_MAX) return false;
    const GrammarNode& n = g_.node(next);
    if (n.num_call_edges == 0 && !n.final) {
      if (n.num_byte_edges > 0) out.push_back(StackTop{next, in[0].parent});
      return false;
    }
  }
  begin_();
  bool bottom = false;
  for (const StackTop& t : in) {
    uint32_t next = g_.next(t.node, b);
    if (next == UINT32_MAX) continue;
    bottom = close_(pool, StackTop{next, t.parent}, out) || bottom;
  }
  return bottom;
}

}  // namespace di::engine::constrain
