// sink_attention_varlen (kernels/cuda/sink_attention_varlen.h) against a double-precision loop over
// the same keys: a prefill chunk that starts past its window (early keys from the ring cache),
// with a padding row, for CSA (a per-row selection of compressed entries, some rows selecting
// none), HCA (every visible entry) and sliding-only layers. The fp32 kernel in one pass and in
// key ranges is held to fp32 rounding; the tensor-core kernel (bf16 operands) to bf16 rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/sink_attention_varlen.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/device_copies.h"

namespace di::test {
namespace {

namespace kc = di::kernels::cuda;

enum class Keys { kSelected, kAllEntries, kWindowOnly };

struct Case {
  int32_t heads, head_dim;
  Keys keys;
};

class SinkAttention : public CudaTestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(Shapes, SinkAttention,
                         ::testing::Values(Case{64, 512, Keys::kSelected}, Case{16, 128, Keys::kAllEntries},
                                           Case{80, 64, Keys::kWindowOnly}, Case{64, 256, Keys::kSelected}));

TEST_P(SinkAttention, MatchesDoublesInFp32AndOnTensorCores) {
  const Case c = GetParam();
  const int32_t nh = c.heads, hd = c.head_dim, window = 128, start = 150, S = 80, rate = 4, topk = 96;
  const int32_t rows = S + 1;  // the last row is padding
  const int64_t entries = 200;
  std::mt19937 rng(static_cast<uint32_t>(hd + nh));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto draw = [&](size_t n, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = scale * u(rng);
    return v;
  };
  // Queries at twice the keys' scale: peaked but not one-hot softmaxes.
  const std::vector<float> q = draw(size_t{rows} * nh * hd, 2.f), kv = draw(size_t{rows} * hd, 1.f),
                           ring = draw(size_t{window} * hd, 1.f), entry = draw(size_t(entries) * hd, 1.f),
                           sinks = draw(nh, 1.f);
  std::vector<int32_t> seq(rows, 0), pos(rows), count(rows, 0), selected(size_t{rows} * topk, 0);
  for (int32_t r = 0; r < rows; ++r) pos[r] = start + r;
  seq[S] = -1;
  pos[S] = 0;
  for (int32_t r = 0; r < S; ++r) {  // distinct entries, in no order; row 0 selects none
    std::vector<int32_t> all(entries);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    count[r] = r == 0 ? 0 : static_cast<int32_t>(rng() % (topk + 1));
    std::copy(all.begin(), all.begin() + count[r], selected.begin() + int64_t{r} * topk);
  }

  // The double-precision reference: window keys, then compressed ones, then the sink.
  std::vector<double> want(size_t{rows} * nh * hd, 0.0);
  for (int32_t r = 0; r < S; ++r) {
    std::vector<const float*> keys;
    for (int32_t p = std::max(0, pos[r] - window + 1); p <= pos[r]; ++p)
      keys.push_back(p >= start ? &kv[size_t(p - start) * hd] : &ring[size_t(p % window) * hd]);
    if (c.keys == Keys::kSelected)
      for (int32_t j = 0; j < count[r]; ++j) keys.push_back(&entry[size_t(selected[size_t(r) * topk + j]) * hd]);
    if (c.keys == Keys::kAllEntries)
      for (int32_t e = 0; e < (pos[r] + 1) / rate; ++e) keys.push_back(&entry[size_t(e) * hd]);
    for (int32_t h = 0; h < nh; ++h) {
      const float* qh = &q[(size_t(r) * nh + h) * hd];
      std::vector<double> logit(keys.size());
      double m = sinks[h];
      for (size_t j = 0; j < keys.size(); ++j) {
        double d = 0;
        for (int32_t x = 0; x < hd; ++x) d += double(qh[x]) * keys[j][x];
        logit[j] = d / std::sqrt(double(hd));
        m = std::max(m, logit[j]);
      }
      double l = std::exp(sinks[h] - m);
      double* o = &want[(size_t(r) * nh + h) * hd];
      for (size_t j = 0; j < keys.size(); ++j) {
        const double p = std::exp(logit[j] - m);
        l += p;
        for (int32_t x = 0; x < hd; ++x) o[x] += p * keys[j][x];
      }
      for (int32_t x = 0; x < hd; ++x) o[x] /= l;
    }
  }

  kc::DeviceBuffer dq = upload(q), dkv = upload(kv), dring = upload(ring), dentry = upload(entry),
                   dsinks = upload(sinks), dblock = upload(std::vector<int32_t>{0});
  const std::vector<kernels::CacheView> views = {one_block_view(dring, window, hd, dblock),
                                            one_block_view(dentry, entries, hd, dblock)};
  const OneSequenceBatch step(seq, pos, start, S, views);
  kc::DeviceBuffer dcount = upload(count), dsel = upload(selected);
  kc::DeviceBuffer dout, dpartial;
  ASSERT_TRUE(dout.allocate(int64_t{rows} * nh * hd * 4).is_ok());
  const int32_t splits = 4;
  ASSERT_TRUE(dpartial.allocate(kc::sink_attention_varlen_partial_floats(rows, nh, hd, splits) * 4).is_ok());

  kc::SinkAttentionVarlenArgs a;
  a.batch = step.batch;
  a.q = dq.as<float>();
  a.kv = dkv.as<float>();
  a.sinks = dsinks.as<float>();
  a.out = dout.as<float>();
  a.num_heads = nh;
  a.head_dim = hd;
  a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  a.window = window;
  a.window_group = 0;
  a.window_layer = 0;
  if (c.keys != Keys::kWindowOnly) {
    a.entry_group = 1;
    a.entry_layer = 0;
  }
  if (c.keys == Keys::kAllEntries) a.compress_rate = rate;
  if (c.keys == Keys::kSelected) {
    a.selected = static_cast<const int32_t*>(dsel.get());
    a.selected_count = static_cast<const int32_t*>(dcount.get());
    a.selected_stride = topk;
  }

  const std::vector<float> nans(want.size(), NAN);
  struct Variant {
    const char* name;
    int32_t splits;
    bool tensor_cores;
    double max_err;
  };
  for (const Variant& v : {Variant{"fp32, one pass", 1, false, 2e-5}, Variant{"fp32, 4 key ranges", splits, false, 2e-5},
                           Variant{"tensor cores", 1, true, 2e-2}}) {
    a.splits = v.splits;
    a.partial = v.splits > 1 ? dpartial.as<float>() : nullptr;
    a.tensor_cores = v.tensor_cores;
    // NaN everywhere first: every output must be written.
    ASSERT_TRUE(kc::copy_to_device(dout.get(), nans.data(), int64_t(nans.size()) * 4).is_ok());
    ASSERT_TRUE(kc::sink_attention_varlen(a, nullptr).is_ok()) << v.name;
    const auto got = download<float>(dout, want.size());
    double worst = 0, err2 = 0, ref2 = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double d = std::fabs(got[i] - want[i]);
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
      err2 += d * d;
      ref2 += want[i] * want[i];
    }
    std::printf("%d heads x %d, %s: max|d| %.3g, relative L2 %.3g\n", nh, hd, v.name, worst, std::sqrt(err2 / ref2));
    EXPECT_LE(worst, v.max_err) << v.name;
    EXPECT_LE(std::sqrt(err2 / ref2), v.max_err / 4) << v.name;
  }
}

}  // namespace
}  // namespace di::test
