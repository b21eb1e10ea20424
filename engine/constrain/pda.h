// Pda: runs a Grammar as a pushdown automaton over bytes — a set of stack tops, advanced one byte
// at a time, with call frames kept in an append-only FramePool so old states stay valid (that is
// what makes rollback cheap). Knows nothing of tokens or masks.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/constrain/grammar.h"

namespace di::engine::constrain {

// One parse position: the node about to consume a byte, and the frame it returns to.
struct StackTop {
  uint32_t node = 0;
  uint32_t parent = 0;  // FramePool id; kBottom when this is the outermost rule
  bool operator==(const StackTop& o) const { return node == o.node && parent == o.parent; }
};

// Call frames (return node + the frame below it). Frames are never changed once pushed; a
// caller may drop everything pushed after a mark (scratch work for mask computation).
class FramePool {
 public:
  static constexpr uint32_t kBottom = 0;
  FramePool() { frames_.push_back({UINT32_MAX, kBottom}); }
  uint32_t push(uint32_t node, uint32_t parent) {
    frames_.push_back({node, parent});
    return static_cast<uint32_t>(frames_.size() - 1);
  }
  const StackTop& frame(uint32_t id) const { return frames_[id]; }
  size_t size() const { return frames_.size(); }
  void truncate(size_t size) { frames_.resize(size); }
  void clear() { frames_.resize(1); }

 private:
  std::vector<StackTop> frames_;
};

class Pda {
 public:
  explicit Pda(const Grammar& g) : g_(g) {}

  // Adds to `out` every top reachable from `t` without consuming a byte whose node can consume
  // one. Returns true when the outermost rule can return (the bottom frame was reached).
  bool close(FramePool& pool, StackTop t, std::vector<StackTop>& out);

  // Advances every top of `in` by byte b; the closed successors go to `out` (cleared first).
  // Returns true when the outermost rule can return right after b.
  bool step(FramePool& pool, const std::vector<StackTop>& in, uint8_t b, std::vector<StackTop>& out);

  // The closed start state of the whole grammar.
  bool start(FramePool& pool, std::vector<StackTop>& out) {
    out.clear();
    begin_();
    return close_(pool, StackTop{g_.root_start(), FramePool::kBottom}, out);
  }

  const Grammar& grammar() const { return g_; }

 private:
  void begin_() {
    visited_.clear();
    frames_.clear();
  }
  bool close_(FramePool& pool, StackTop t, std::vector<StackTop>& out);

  const Grammar& g_;
  // Per-step scratch: tops already expanded, and frames already pushed (so two paths that push
  // the same return point share one frame and their tops compare equal).
  std::vector<StackTop> visited_;
  std::vector<StackTop> work_;
  std::vector<std::pair<StackTop, uint32_t>> frames_;
};

}  // namespace di::engine::constrain
