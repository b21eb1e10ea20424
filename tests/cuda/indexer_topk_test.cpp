// The V4 lightning indexer's kernels (kernels/cuda/indexer_topk.h) on V4-Flash's shape (64
// heads x 128): scores against a double-precision loop (fp32 or tensor-core products), and the
// selection exactly against a sort of the kernel's own scores, with ties at the cut (a block of identical zero scores, taken
// lowest index first), rows that see fewer than topk entries, and a row past 8k entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/indexer_topk.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/device_copies.h"

namespace di::test {
namespace {

namespace kc = di::kernels::cuda;

// The fp32 scores, and the tensor-core ones from bf16 queries and keys.
class IndexerTopk : public CudaTestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Products, IndexerTopk, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "TensorCores" : "Fp32"; });

TEST_P(IndexerTopk, ScoresMatchDoublesAndSelectionIsTheTopkInIndexOrder) {
  const bool tensor_cores = GetParam();
  const int32_t heads = 64, hd = 128, topk = 512;
  // Visible entries per row (rate 1: a row at position p sees p + 1): fewer than topk, a tie
  // block across the cut, a plain row, past the 8192 entries a sort in shared memory held.
  const std::vector<int32_t> visible = {200, 1040, 1500, 9000};
  const int32_t rows = static_cast<int32_t>(visible.size());
  const int64_t entries = *std::max_element(visible.begin(), visible.end());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> keys(entries * hd);
  for (int64_t e = 0; e < entries; ++e)
    for (int32_t d = 0; d < hd; ++d)
      // Entries 300..999 are zero keys: 700 scores of exactly 0 around row 1's cut (its other
      // 340 entries score above 0, so it takes 172 of the zeros).
      keys[e * hd + d] = e >= 300 && e < 1000 ? 0.f : u(rng);
  std::vector<float> q(int64_t{rows} * heads * hd), w(int64_t{rows} * heads);
  for (float& x : q) x = u(rng);
  for (float& x : w) x = u(rng);

  kc::DeviceBuffer dkeys = upload(keys), dq = upload(q), dw = upload(w), dblock = upload(std::vector<int32_t>{0});
  const kernels::CacheView view = one_block_view(dkeys, entries, hd, dblock);
  std::vector<int32_t> seq(rows, 0), pos(rows);
  for (int32_t r = 0; r < rows; ++r) pos[r] = visible[r] - 1;
  const OneSequenceBatch step(seq, pos, 0, rows, {view});
  kc::DeviceBuffer dscores, dsel, dcount;
  ASSERT_TRUE(dscores.allocate(int64_t{rows} * entries * 4).is_ok());
  ASSERT_TRUE(dsel.allocate(int64_t{rows} * topk * 4).is_ok());
  ASSERT_TRUE(dcount.allocate(int64_t{rows} * 4).is_ok());

  kc::IndexerVarlenArgs a;
  a.batch = step.batch;
  a.q = dq.as<float>();
  a.weights = dw.as<float>();
  a.heads = heads;
  a.head_dim = hd;
  a.rate = 1;
  a.topk = topk;
  a.softmax_scale = 1.0f / std::sqrt(static_cast<float>(hd));
  a.weight_scale = 1.0f / std::sqrt(static_cast<float>(heads));
  a.scores = dscores.as<float>();
  a.max_visible = entries;
  a.selected = static_cast<int32_t*>(dsel.get());
  a.count = static_cast<int32_t*>(dcount.get());
  a.tensor_cores = tensor_cores;
  ASSERT_TRUE(kc::indexer_topk_varlen(a, nullptr).is_ok());

  const auto scores = download<float>(dscores, static_cast<size_t>(rows) * entries);
  const auto sel = download<int32_t>(dsel, static_cast<size_t>(rows) * topk);
  const auto count = download<int32_t>(dcount, rows);
  bool tie_at_cut = false;
  for (int32_t r = 0; r < rows; ++r) {
    const int64_t n = visible[r];
    if (n <= topk) {
      ASSERT_EQ(count[r], n);
      for (int64_t k = 0; k < n; ++k) ASSERT_EQ(sel[r * topk + k], k) << "row " << r;
      continue;
    }
    ASSERT_EQ(count[r], topk);
    const float* s = scores.data() + int64_t{r} * entries;
    double worst = 0, scale = 0;
    for (int64_t e = 0; e < n; ++e) {
      double ref = 0;
      for (int32_t h = 0; h < heads; ++h) {
        double dot = 0;
        for (int32_t d = 0; d < hd; ++d)
          dot += double(q[(int64_t{r} * heads + h) * hd + d]) * keys[e * hd + d];
        ref += std::max(dot, 0.0) * a.softmax_scale * (double(w[r * heads + h]) * a.weight_scale);
      }
      worst = std::max(worst, std::fabs(s[e] - ref));
      scale = std::max(scale, std::fabs(ref));
    }
    std::printf("row %d (%lld entries): scores max|d|/max|ref| %.3g\n", r, static_cast<long long>(n), worst / scale);
    EXPECT_LE(worst / scale, tensor_cores ? 1e-2 : 1e-5);
    // The expected choice from the kernel's own scores: best first, ties to the lower index.
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return s[x] > s[y]; });
    tie_at_cut = tie_at_cut || s[order[topk - 1]] == s[order[topk]];
    std::vector<int32_t> want(order.begin(), order.begin() + topk);
    std::sort(want.begin(), want.end());
    const std::vector<int32_t> got(sel.begin() + int64_t{r} * topk, sel.begin() + int64_t{r + 1} * topk);
    EXPECT_EQ(got, want) << "row " << r;
  }
  EXPECT_TRUE(tie_at_cut) << "no row's cut fell inside a run of equal scores";
}

}  // namespace
}  // namespace di::test
