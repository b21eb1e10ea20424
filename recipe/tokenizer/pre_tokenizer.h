// The pre-tokenizer: Split steps applied in sequence (each to every piece the previous one
// produced), then ByteLevel, which only marks that the model works on bytes. Produces pieces
// (pre-tokens) as views into the text; knows nothing of vocabularies or added tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "recipe/tokenizer/split_pattern.h"

namespace di::recipe {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct SplitStep {
  SplitPattern pattern;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
};

class PreTokenizer {
 public:
  // Appends each step; `byte_level_*` come from the final ByteLevel step.
  void add_split(SplitStep step) { steps_.push_back(std::move(step)); }
  void set_byte_level(bool add_prefix_space) { add_prefix_space_ = add_prefix_space; }
  bool add_prefix_space() const { return add_prefix_space_; }

  // Calls emit(std::string_view piece) for every non-empty piece of `text`, in order. With
  // add_prefix_space the caller prepends the space (pieces are views into `text`).
  template <class Emit>
  void split(std::string_view text, Emit&& emit) const {
    split_from(0, text, emit);
  }

  // Splits one piece with one step into (begin, end) byte ranges, following its behavior.
  static void split_one(const SplitStep& step, std::string_view piece,
                        std::vector<std::pair<size_t, size_t>>& out);

 private:
  template <class Emit>
  void split_from(size_t step, std::string_view piece, Emit& emit) const {
    if (piece.empty()) return;
    if (step == steps_.size()) {
      emit(piece);
      return;
    }
    const SplitStep& st = steps_[step];
    if (st.behavior == SplitBehavior::kIsolated && !st.invert) {
      // The hot path: matches and the gaps between them, in order, without a buffer.
      size_t pos = 0, b, e;
      while (pos < piece.size() && st.pattern.find(piece, pos, &b, &e)) {
        if (b > pos) split_from(step + 1, piece.substr(pos, b - pos), emit);
        split_from(step + 1, piece.substr(b, e - b), emit);
        pos = e;
      }
      if (pos < piece.size()) split_from(step + 1, piece.substr(pos), emit);
      return;
    }
    std::vector<std::pair<size_t, size_t>> ranges;
    split_one(st, piece, ranges);
    for (const auto& [b, e] : ranges) split_from(step + 1, piece.substr(b, e - b), emit);
  }

  std::vector<SplitStep> steps_;
  bool add_prefix_space_ = false;
};

}  // namespace di::recipe
