// Paged causal GQA attention on the GPU against a float64 CPU reference: random q/k/v, K/V
// scattered over shuffled blocks of two sequences with different lengths and new-token counts
// (decode and prefill rows in one launch), fp32 and bf16, output poisoned first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "tests/cuda/bf16_bits.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/dtype.h"
#include "kernels/cuda/decode_attention.h"
#include "kernels/cuda/flash_attention.h"
#include "kernels/cuda/paged_attention.h"
#include "tests/cuda/cuda_suite.h"

namespace kc = di::kernels::cuda;

namespace {

using di::test::from_bf16;
using di::test::to_bf16;

struct Case {
  int heads, kv_heads, head_dim;
  kc::DType dtype;
  bool fast = false;  // prefill rows through the tensor-core kernel, decode rows through split-KV
};

class CudaPagedAttention : public di::test::CudaTestWithParam<Case> {};

TEST_P(CudaPagedAttention, MatchesFloat64Reference) {
  const Case c = GetParam();
  const bool bf16 = c.dtype == kc::DType::kBF16;
  const int64_t eb = kc::dtype_bytes(c.dtype);
  const int bs = 16, layers = 2, layer = 1;
  const int64_t kvw = int64_t{c.kv_heads} * c.head_dim, qw = int64_t{c.heads} * c.head_dim;
  const int64_t entry_bytes = 2 * kvw * eb;
  // Two sequences: (start, new tokens) = a decode at position 70, a prefill of 37 from 5.
  const std::vector<std::pair<int, int>> seqs = {{70, 1}, {5, 37}, {0, 150}, {0, 1}, {999, 1}};
  std::mt19937 rng(c.heads * 131 + c.head_dim + int(c.dtype));
  std::normal_distribution<float> nd(0.f, 1.f);
  auto round = [&](float v) { return bf16 ? from_bf16(to_bf16(v)) : v; };

  // Blocks of both sequences, shuffled over one pool.
  int total_blocks = 0;
  for (auto [s0, n] : seqs) total_blocks += (s0 + n + bs - 1) / bs;
  std::vector<int32_t> pool(total_blocks + 3);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  const int64_t block_stride = int64_t{layers} * bs * entry_bytes;  // [layer][slot] inside a block
  std::vector<uint8_t> cache(pool.size() * block_stride, 0);
  std::vector<int32_t> tables;
  std::vector<int64_t> table_start;  // each view's first block in `tables`
  std::vector<di::kernels::CacheView> views;
  kc::DeviceBuffer d_cache;
  ASSERT_TRUE(d_cache.allocate(static_cast<int64_t>(cache.size())).is_ok());

  std::vector<std::vector<float>> kref(seqs.size()), vref(seqs.size());  // [pos][kvw]
  std::vector<float> q;
  std::vector<kc::AttentionTile> tiles, flash_tiles, decode_tiles;
  int64_t max_context = 0;
  const kc::AttentionShape shape{c.heads, c.kv_heads, c.head_dim, 1.f / std::sqrt(float(c.head_dim))};
  int row = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto [s0, n] = seqs[s];
    const int len = s0 + n, nb = (len + bs - 1) / bs;
    di::kernels::CacheView d;
    d.base = d_cache.as<uint8_t>();
    d.layer_stride = int64_t{bs} * entry_bytes;
    d.block_stride = block_stride;
    d.entry_bytes = entry_bytes;
    d.block_size = bs;
    table_start.push_back(static_cast<int64_t>(tables.size()));
    for (int b = 0; b < nb; ++b) tables.push_back(pool.back()), pool.pop_back();
    views.push_back(d);
    kref[s].resize(size_t(len) * kvw);
    vref[s].resize(size_t(len) * kvw);
    for (int p = 0; p < len; ++p) {
      uint8_t* e = cache.data() + int64_t{tables[table_start[s] + p / bs]} * block_stride + layer * d.layer_stride +
                   (p % bs) * entry_bytes;
      for (int64_t i = 0; i < 2 * kvw; ++i) {
        const float v = round(nd(rng));
        (i < kvw ? kref[s][p * kvw + i] : vref[s][p * kvw + i - kvw]) = v;
        if (bf16) {
          const uint16_t h = to_bf16(v);
          std::memcpy(e + i * 2, &h, 2);
        } else {
          std::memcpy(e + i * 4, &v, 4);
        }
      }
    }
    for (int i = 0; i < n * qw; ++i) q.push_back(round(nd(rng)));
    if (c.fast && n > 1 && kc::flash_attention_supports(shape, c.dtype)) {
      kc::append_flash_tiles(static_cast<int32_t>(s), row, s0, n, flash_tiles);
    } else if (c.fast && n == 1) {
      decode_tiles.push_back({static_cast<int32_t>(s), row, 1, s0});
      max_context = std::max<int64_t>(max_context, s0 + 1);
    } else {
      kc::append_attention_tiles(shape, static_cast<int32_t>(s), row, s0, n, tiles);
    }
    row += n;
  }
  const int rows = row;
  std::vector<uint8_t> qbytes(q.size() * eb);
  for (size_t i = 0; i < q.size(); ++i) {
    if (bf16) {
      const uint16_t h = to_bf16(q[i]);
      std::memcpy(qbytes.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(qbytes.data() + 4 * i, &q[i], 4);
    }
  }
  kc::DeviceBuffer d_q, d_out, d_tiles, d_flash, d_decode, d_ws, d_views, d_tables;
  ASSERT_TRUE(d_decode.allocate((decode_tiles.size() + 1) * sizeof(kc::AttentionTile)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d_decode.get(), decode_tiles.data(), decode_tiles.size() * sizeof(kc::AttentionTile)).is_ok());
  ASSERT_TRUE(d_flash.allocate((flash_tiles.size() + 1) * sizeof(kc::AttentionTile)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d_flash.get(), flash_tiles.data(), flash_tiles.size() * sizeof(kc::AttentionTile)).is_ok());
  ASSERT_TRUE(d_q.allocate(qbytes.size()).is_ok());
  ASSERT_TRUE(d_out.allocate(rows * qw * eb).is_ok());
  ASSERT_TRUE(d_tiles.allocate((tiles.size() + 1) * sizeof(kc::AttentionTile)).is_ok());
  ASSERT_TRUE(d_views.allocate(views.size() * sizeof(di::kernels::CacheView)).is_ok());
  ASSERT_TRUE(d_tables.allocate(tables.size() * 4).is_ok());
  for (size_t s = 0; s < views.size(); ++s) views[s].block_ids = d_tables.as<int32_t>() + table_start[s];
  ASSERT_TRUE(kc::copy_to_device(d_cache.get(), cache.data(), cache.size()).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d_q.get(), qbytes.data(), qbytes.size()).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d_tiles.get(), tiles.data(), tiles.size() * sizeof(kc::AttentionTile)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d_views.get(), views.data(), views.size() * sizeof(di::kernels::CacheView)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d_tables.get(), tables.data(), tables.size() * 4).is_ok());
  ASSERT_EQ(cudaMemset(d_out.get(), 0xff, rows * qw * eb), cudaSuccess);  // NaN poison

  auto st = kc::paged_attention(d_q.get(), qw, d_out.get(), d_tiles.as<kc::AttentionTile>(),
                                static_cast<int32_t>(tiles.size()), d_views.as<di::kernels::CacheView>(), layer, shape,
                                c.dtype, nullptr);
  ASSERT_TRUE(st.is_ok()) << st.message();
  if (c.fast) {
    const int32_t nd = static_cast<int32_t>(decode_tiles.size());
    const int32_t splits = kc::decode_attention_splits(nd, max_context, shape);
    ASSERT_TRUE(d_ws.allocate(kc::decode_attention_workspace_bytes(nd, splits, shape)).is_ok());
    st = kc::decode_attention(d_q.get(), qw, d_out.get(), d_decode.as<kc::AttentionTile>(), nd, splits, max_context,
                              d_views.as<di::kernels::CacheView>(), layer, shape, d_ws.get(), c.dtype, nullptr);
    ASSERT_TRUE(st.is_ok()) << st.message();
    st = kc::flash_attention(d_q.get(), qw, d_out.get(), d_flash.as<kc::AttentionTile>(),
                             static_cast<int32_t>(flash_tiles.size()), d_views.as<di::kernels::CacheView>(), layer,
                             shape, nullptr);
    ASSERT_TRUE(st.is_ok()) << st.message();
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> out(rows * qw * eb);
  ASSERT_TRUE(kc::copy_to_host(out.data(), d_out.get(), out.size()).is_ok());

  double num = 0, den = 0;
  row = 0;
  const int group = c.heads / c.kv_heads;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto [s0, n] = seqs[s];
    for (int t = 0; t < n; ++t, ++row) {
      const int pos = s0 + t;
      for (int h = 0; h < c.heads; ++h) {
        const int kh = h / group;
        std::vector<double> w(pos + 1);
        double mx = -1e300;
        for (int j = 0; j <= pos; ++j) {
          double dot = 0;
          for (int d = 0; d < c.head_dim; ++d)
            dot += double(q[(size_t(row) * qw) + h * c.head_dim + d]) * kref[s][size_t(j) * kvw + kh * c.head_dim + d];
          w[j] = dot * shape.scale;
          mx = std::max(mx, w[j]);
        }
        double sum = 0;
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int d = 0; d < c.head_dim; ++d) {
          double ref = 0;
          for (int j = 0; j <= pos; ++j) ref += w[j] / sum * vref[s][size_t(j) * kvw + kh * c.head_dim + d];
          const size_t k = size_t(row) * qw + h * c.head_dim + d;
          float got;
          if (bf16) {
            uint16_t hb;
            std::memcpy(&hb, out.data() + 2 * k, 2);
            got = from_bf16(hb);
          } else {
            std::memcpy(&got, out.data() + 4 * k, 4);
          }
          ASSERT_FALSE(std::isnan(got)) << "unwritten at row " << row << " head " << h << " dim " << d;
          num += (got - ref) * (got - ref);
          den += ref * ref;
        }
      }
    }
  }
  const double rel = std::sqrt(num / den);
  EXPECT_LT(rel, bf16 ? 1e-2 : 1e-5) << "relative error " << rel;
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaPagedAttention,
                         ::testing::Values(Case{8, 2, 16, kc::DType::kF32}, Case{32, 8, 128, kc::DType::kF32},
                                           Case{32, 8, 128, kc::DType::kBF16}, Case{4, 4, 64, kc::DType::kBF16},
                                           Case{16, 1, 64, kc::DType::kF32},
                                           Case{32, 8, 128, kc::DType::kBF16, true},
                                           Case{8, 2, 64, kc::DType::kBF16, true}, Case{4, 1, 256, kc::DType::kBF16, true},
                                           Case{4, 1, 256, kc::DType::kBF16}, Case{32, 8, 128, kc::DType::kF32, true}));

}  // namespace
