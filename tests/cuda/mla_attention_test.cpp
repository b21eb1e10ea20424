// mla_attention (the absorbed latent attention over a paged cache, every row of a step in one
// launch) against a double-precision softmax over the same entries on the host: a step that
// mixes a prefill chunk, a decode token, a chunk that continues a sequence and padding rows, with
// more heads than one block takes, in one pass and with split key ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/mla_attention.h"
#include "kernels/cuda/mla_query.h"
#include "tests/cuda/bf16_bits.h"
#include "tests/cuda/cuda_suite.h"

namespace di::test {
namespace {
namespace kc = di::kernels::cuda;

struct Shape {
  int32_t heads, latent, rope;
};

class MlaAttention : public CudaTestWithParam<Shape> {};

template <typename T>
const T* upload(kc::DeviceBuffer& buf, const std::vector<T>& host) {
  EXPECT_TRUE(buf.allocate(static_cast<int64_t>(std::max<size_t>(1, host.size()) * sizeof(T))).is_ok());
  EXPECT_TRUE(kc::copy_to_device(buf.get(), host.data(), static_cast<int64_t>(host.size() * sizeof(T))).is_ok());
  return buf.as<const T>();
}

TEST_P(MlaAttention, MatchesHostSoftmaxForAMixedStep) {
  const Shape sh = GetParam();
  const int32_t nh = sh.heads, L = sh.latent, D = sh.latent + sh.rope, layers = 2, layer = 1, block = 16;
  // (start, new tokens) per sequence: a prefill chunk, a decode token, a chunk after a prefix.
  const std::vector<std::pair<int32_t, int32_t>> seqs = {{0, 37}, {300, 1}, {70, 5}};
  const int32_t padding = 2;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);

  // Each sequence's cache: its own blocks, laid out in reverse so paging is exercised; once with
  // fp32 entries and once with bf16 ones holding the same values (drawn bf16-exact).
  std::vector<kc::DeviceBuffer> caches(seqs.size()), caches16(seqs.size()), tables(seqs.size());
  std::vector<std::vector<float>> entries(seqs.size());  // host copy: [end, D] of `layer`
  std::vector<kernels::CacheView> views, views16;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const int32_t end = seqs[s].first + seqs[s].second, blocks = (end + block - 1) / block;
    const int64_t block_stride = int64_t{block} * D * 4, layer_stride = blocks * block_stride;
    std::vector<float> mem(static_cast<size_t>(layers * layer_stride / 4), 0.f);
    std::vector<uint16_t> mem16(mem.size(), 0);
    std::vector<int32_t> ids(blocks);
    for (int32_t b = 0; b < blocks; ++b) ids[b] = blocks - 1 - b;
    entries[s].resize(static_cast<size_t>(end) * D);
    for (int32_t p = 0; p < end; ++p)
      for (int32_t c = 0; c < D; ++c) {
        const float v = round_bf16(normal(rng));
        entries[s][p * D + c] = v;
        const int64_t at = (layer * layer_stride + ids[p / block] * block_stride) / 4 + (p % block) * D + c;
        mem[at] = v;
        mem16[at] = to_bf16(v);
      }
    ASSERT_TRUE(caches[s].allocate(static_cast<int64_t>(mem.size() * 4)).is_ok());
    ASSERT_TRUE(kc::copy_to_device(caches[s].get(), mem.data(), static_cast<int64_t>(mem.size() * 4)).is_ok());
    kernels::CacheView v;
    v.base = caches[s].as<uint8_t>();
    v.layer_stride = layer_stride;
    v.block_stride = block_stride;
    v.entry_bytes = int64_t{D} * 4;
    v.block_size = block;
    v.block_ids = upload(tables[s], ids);
    views.push_back(v);
    // The bf16 cache: the same layout at half the bytes (element indices are those of mem).
    ASSERT_TRUE(caches16[s].allocate(static_cast<int64_t>(mem16.size() * 2)).is_ok());
    ASSERT_TRUE(kc::copy_to_device(caches16[s].get(), mem16.data(), static_cast<int64_t>(mem16.size() * 2)).is_ok());
    kernels::CacheView v16 = v;
    v16.base = caches16[s].as<uint8_t>();
    v16.layer_stride = layer_stride / 2;
    v16.block_stride = block_stride / 2;
    v16.entry_bytes = int64_t{D} * 2;
    views16.push_back(v16);
  }
  std::vector<int32_t> row_seq, row_pos, start, end, row0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    start.push_back(seqs[s].first);
    end.push_back(seqs[s].first + seqs[s].second);
    row0.push_back(static_cast<int32_t>(row_seq.size()));
    for (int32_t i = 0; i < seqs[s].second; ++i) {
      row_seq.push_back(static_cast<int32_t>(s));
      row_pos.push_back(seqs[s].first + i);
    }
  }
  for (int32_t i = 0; i < padding; ++i) {
    row_seq.push_back(-1);
    row_pos.push_back(0);
  }
  const int32_t T = static_cast<int32_t>(row_seq.size());
  std::vector<float> q(static_cast<size_t>(T) * nh * D);
  for (float& x : q) x = normal(rng);
  const float scale = 1.f / std::sqrt(static_cast<float>(D));

  // The host reference, in double.
  std::vector<double> ref(static_cast<size_t>(T) * nh * L, 0.0);
  for (int32_t r = 0; r < T; ++r) {
    if (row_seq[r] < 0) continue;
    const std::vector<float>& e = entries[row_seq[r]];
    const int32_t n = row_pos[r] + 1;
    for (int32_t h = 0; h < nh; ++h) {
      const float* qr = q.data() + (int64_t{r} * nh + h) * D;
      std::vector<double> s(n);
      double mx = -INFINITY;
      for (int32_t k = 0; k < n; ++k) {
        double d = 0;
        for (int32_t c = 0; c < D; ++c) d += double(qr[c]) * e[int64_t{k} * D + c];
        s[k] = d * scale;
        mx = std::max(mx, s[k]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int32_t k = 0; k < n; ++k)
        for (int32_t c = 0; c < L; ++c) ref[(int64_t{r} * nh + h) * L + c] += s[k] / sum * e[int64_t{k} * D + c];
    }
  }

  kc::DeviceBuffer dseq, dpos, dstart, dend, drow0, dviews, dq, dout, dpartial;
  kc::TokenBatch tb;
  tb.num_tokens = T;
  tb.num_seqs = static_cast<int32_t>(seqs.size());
  tb.num_groups = 1;
  tb.ids = nullptr;
  tb.seq = upload(dseq, row_seq);
  tb.pos = upload(dpos, row_pos);
  tb.seq_start = upload(dstart, start);
  tb.seq_end = upload(dend, end);
  tb.seq_row0 = upload(drow0, row0);
  kc::DeviceBuffer dviews16;
  const kernels::CacheView* views_f32 = upload(dviews, views);
  const kernels::CacheView* views_bf16 = upload(dviews16, views16);
  const int64_t max_end = 301;
  // 0: fp32 cache on CUDA cores, 1: fp32 cache in tf32, 2: bf16 cache in bf16.
  for (const int mode : {0, 1, 2}) {
  const bool tc = mode == 1, bf16 = mode == 2;
  if (bf16 && !kc::mla_bf16_cache_fits(L, sh.rope)) continue;
  tb.views = bf16 ? views_bf16 : views_f32;
  const int32_t auto_splits = kc::mla_attention_splits(T, nh, max_end, tc, bf16);
  for (int32_t splits : {1, 3, auto_splits}) {
    kc::MlaAttentionArgs a;
    a.batch = tb;
    a.q = upload(dq, q);
    ASSERT_TRUE(dout.allocate(int64_t{T} * nh * L * 4).is_ok());
    // Garbage first: padding rows must come back zero, not untouched.
    std::vector<float> junk(static_cast<size_t>(T) * nh * L, 7.f);
    ASSERT_TRUE(kc::copy_to_device(dout.get(), junk.data(), int64_t{T} * nh * L * 4).is_ok());
    a.out = dout.as<float>();
    a.num_heads = nh;
    a.latent_dim = L;
    a.rope_dim = sh.rope;
    a.scale = scale;
    a.cache_group = 0;
    a.cache_layer = layer;
    a.splits = splits;
    a.keys_per_split = kc::mla_attention_keys_per_split(max_end, splits);
    const int64_t pf = kc::mla_attention_partial_floats(T, nh, L, splits);
    ASSERT_TRUE(dpartial.allocate(std::max<int64_t>(4, pf * 4)).is_ok());
    a.partial = dpartial.as<float>();
    a.tensor_cores = tc;
    a.bf16_cache = bf16;
    ASSERT_TRUE(kc::mla_attention(a, nullptr).is_ok());
    std::vector<float> got(static_cast<size_t>(T) * nh * L);
    ASSERT_TRUE(kc::copy_to_host(got.data(), dout.get(), int64_t{T} * nh * L * 4).is_ok());
    double worst = 0, num = 0, den = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::abs(got[i] - ref[i]));
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
    if (bf16) {
      // bf16 queries and probabilities (8-bit mantissas) against bf16-exact entries.
      EXPECT_LT(std::sqrt(num / den), 8e-3) << "bf16 cache, splits " << splits;
      EXPECT_LT(worst, 6e-2) << "bf16 cache, splits " << splits;
    } else if (tc) {
      // tf32 products (10-bit mantissas): about 1e-3 of the output's size, as bf16 activations allow.
      EXPECT_LT(std::sqrt(num / den), 2e-3) << "tensor cores, splits " << splits;
      EXPECT_LT(worst, 2e-2) << "tensor cores, splits " << splits;
    } else {
      EXPECT_LT(worst, 1e-4) << "splits " << splits;
    }
    for (int32_t r = T - padding; r < T; ++r)
      for (int64_t i = 0; i < int64_t{nh} * L; ++i) ASSERT_EQ(got[int64_t{r} * nh * L + i], 0.f) << "padding row " << r;
  }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, MlaAttention,
                         ::testing::Values(Shape{20, 512, 64},  // V2-Lite's latent, more heads than a block
                                           Shape{4, 24, 8},     // the fixtures' sizes
                                           Shape{16, 32, 8}));

// The absorbed query's staging: q_nope rounded to bf16 in place of the old conversion, q_pe copied
// into the latent query's rope channels in place of the strided copy, nothing else written.
TEST(MlaStageQuery, RoundsTheNopeHalfAndCopiesTheRopeHalf) {
  if (kc::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 5, heads = 3, nope = 16, rope = 8, latent = 32, qk = nope + rope, entry = latent + rope;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 3.f);
  std::vector<float> q(rows * heads * qk);
  for (float& x : q) x = normal(rng);
  const float kSentinel = -12345.f;
  kc::DeviceBuffer dq, d16, dlat;
  const float* q_dev = upload(dq, q);
  upload(d16, std::vector<uint16_t>(rows * heads * qk, 0xffff));
  upload(dlat, std::vector<float>(rows * heads * entry, kSentinel));
  for (const bool with16 : {true, false}) {
    ASSERT_TRUE(kc::mla_stage_query(q_dev, rows, heads, nope, rope, latent, with16 ? d16.get() : nullptr,
                                    dlat.as<float>(), nullptr)
                    .is_ok());
    std::vector<uint16_t> got16(rows * heads * qk);
    std::vector<float> lat(rows * heads * entry);
    ASSERT_TRUE(kc::copy_to_host(got16.data(), d16.get(), static_cast<int64_t>(got16.size() * 2)).is_ok());
    ASSERT_TRUE(kc::copy_to_host(lat.data(), dlat.get(), static_cast<int64_t>(lat.size() * 4)).is_ok());
    for (int64_t v = 0; v < rows * heads; ++v) {
      for (int64_t c = 0; c < qk; ++c) {
        const uint16_t want = c < nope ? to_bf16(q[v * qk + c]) : 0xffff;  // the rope half stays as it was
        EXPECT_EQ(got16[v * qk + c], want) << "vector " << v << " channel " << c;
      }
      for (int64_t c = 0; c < entry; ++c) {
        const float want = c < latent ? kSentinel : q[v * qk + nope + (c - latent)];
        EXPECT_EQ(lat[v * entry + c], want) << "vector " << v << " latent channel " << c;
      }
    }
  }
  EXPECT_FALSE(kc::mla_stage_query(q_dev, 1, 0, nope, rope, latent, nullptr, dlat.as<float>(), nullptr).is_ok());
}

}  // namespace
}  // namespace di::test
