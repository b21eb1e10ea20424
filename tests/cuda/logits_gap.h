// How far a bf16 GPU model's logits are from an fp32 reference (the CPU model, or transformers'
// fixture): the relative L2 error over all rows, and argmax agreement on the rows the reference
// decides, those whose top-two logits are apart by more than 10x the row's largest error (bf16
// rounding can honestly flip the others).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/model_fixture.h"

namespace di::test {

struct LogitsGap {
  double rel_l2 = 0;
  int agree = 0, decided = 0;
  std::vector<bool> row_decided;  // per row: decided by the rule above
};

inline LogitsGap logits_gap(const std::vector<float>& got, const std::vector<float>& ref, int64_t vocab) {
  LogitsGap g;
  double num = 0, den = 0;
  for (size_t r = 0; r * vocab < ref.size(); ++r) {
    const float* a = got.data() + r * vocab;
    const float* b = ref.data() + r * vocab;
    double row_err = 0;
    for (int64_t v = 0; v < vocab; ++v) {
      num += (a[v] - b[v]) * double(a[v] - b[v]);
      den += b[v] * double(b[v]);
      row_err = std::max(row_err, std::fabs(double(a[v]) - b[v]));
    }
    std::vector<float> sorted(b, b + vocab);
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    const bool decided = sorted[0] - sorted[1] > 10 * row_err;
    g.row_decided.push_back(decided);
    if (decided) {
      ++g.decided;
      g.agree += argmax(a, vocab) == argmax(b, vocab);
    }
  }
  g.rel_l2 = std::sqrt(num / den);
  return g;
}

}  // namespace di::test
