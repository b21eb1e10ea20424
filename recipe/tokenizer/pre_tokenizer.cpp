// The general Split behaviors (Removed, MergedWithPrevious, MergedWithNext, Contiguous and
// inverted patterns); Isolated without inversion is inline in the header.
#include "recipe/tokenizer/pre_tokenizer.h"

namespace di::recipe {

void PreTokenizer::split_one(const SplitStep& step, std::string_view piece,
                             std::vector<std::pair<size_t, size_t>>& out) {
  struct Seg {
    size_t b, e;
    bool match;
  };
  std::vector<Seg> segs;
  size_t pos = 0, b, e;
  while (pos < piece.size() && step.pattern.find(piece, pos, &b, &e)) {
    if (b > pos) segs.push_back({pos, b, step.invert});
    segs.push_back({b, e, !step.invert});
    pos = e;
  }
  if (pos < piece.size()) segs.push_back({pos, piece.size(), step.invert});

  switch (step.behavior) {
    case SplitBehavior::kIsolated:
      for (const Seg& s : segs) out.emplace_back(s.b, s.e);
      break;
    case SplitBehavior::kRemoved:
      for (const Seg& s : segs)
        if (!s.match) out.emplace_back(s.b, s.e);
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool prev_match = false;
      for (const Seg& s : segs) {
        if (s.match && !prev_match && !out.empty()) out.back().second = s.e;
        else out.emplace_back(s.b, s.e);
        prev_match = s.match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      // Walk backwards: a match joins the piece that follows it unless that piece is a match.
      std::vector<std::pair<size_t, size_t>> rev;
      bool next_match = false;
      for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
        if (it->match && !next_match && !rev.empty()) rev.back().first = it->b;
        else rev.emplace_back(it->b, it->e);
        next_match = it->match;
      }
      out.insert(out.end(), rev.rbegin(), rev.rend());
      break;
    }
    case SplitBehavior::kContiguous: {
      bool prev_match = false;
      for (const Seg& s : segs) {
        if (s.match && prev_match && !out.empty()) out.back().second = s.e;
        else out.emplace_back(s.b, s.e);
        prev_match = s.match;
      }
      break;
    }
  }
}

}  // namespace di::recipe
