// KV cache: block pool refcounts and LRU, layout placement, admission with prefix hits only at
// checkpointed boundaries, fork, and blocks returning to the pool.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "engine/kv/block_pool.h"
#include "engine/kv/cache_layout.h"
#include "engine/kv/kv_cache_manager.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

std::vector<int32_t> toks(int n, int base = 1) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = base + i;
  return t;
}

TEST(BlockPool, RefcountsAndFreeListReturnEveryBlock) {
  BlockPool pool(4);
  auto a = pool.allocate(), b = pool.allocate();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(pool.num_free(), 2);
  pool.ref(*a);
  pool.unref(*a);
  EXPECT_EQ(pool.refcount(*a), 1);
  pool.unref(*a);
  pool.unref(*b);
  EXPECT_EQ(pool.num_free(), 4);
  EXPECT_THROW(pool.unref(*b), std::logic_error);
}

TEST(BlockPool, FreedCachedBlockIsFoundUntilEvictedLeastRecentlyUsedFirst) {
  BlockPool pool(2);
  auto t1 = toks(4), t2 = toks(4, 50);
  const uint64_t h1 = hash_block_tokens(0, t1), h2 = hash_block_tokens(0, t2);
  EXPECT_NE(h1, h2);
  auto a = *pool.allocate(), b = *pool.allocate();
  pool.register_hash(a, h1, 0, t1);
  pool.register_hash(b, h2, 0, t2);
  pool.unref(a);  // a freed first: evicted first
  pool.unref(b);
  EXPECT_EQ(pool.num_free(), 2);
  EXPECT_TRUE(pool.is_cached(h1));
  auto c = pool.allocate();
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, a);
  EXPECT_FALSE(pool.is_cached(h1));
  auto hit = pool.acquire_cached(h2, 0, t2);
  ASSERT_TRUE(hit);
  EXPECT_EQ(*hit, b);
  EXPECT_EQ(pool.num_free(), 0);
  // Same hash but other tokens (a collision) is a miss.
  pool.unref(b);
  EXPECT_FALSE(pool.acquire_cached(h2, 0, t1));
}

TEST(CacheLayout, CompressedEntryLivesInTheBlockOfItsLastToken) {
  std::vector<CacheGroupSpec> g = {{"c4", CacheKind::kCompressed, 1, 8, 0, 4, 0},
                                   {"c128", CacheKind::kCompressed, 1, 8, 0, 128, 0}};
  auto l = make_cache_layout(g, 16);
  ASSERT_TRUE(l.is_ok());
  int64_t block, off;
  l->locate_block_entry(0, 0, 5, &block, &off);  // tokens 20..23 -> block 1
  EXPECT_EQ(block, 1);
  l->locate_block_entry(1, 0, 0, &block, &off);  // tokens 0..127 -> block 7
  EXPECT_EQ(block, 7);
  l->locate_block_entry(1, 0, 1, &block, &off);  // tokens 128..255 -> block 15
  EXPECT_EQ(block, 15);
  // Rates that do not divide the block size: every entry still has a distinct home.
  for (int32_t m : {3, 5, 6, 7, 24, 40}) {
    std::vector<CacheGroupSpec> odd = {{"odd", CacheKind::kCompressed, 2, 8, 0, m, 0}};
    auto lo = make_cache_layout(odd, 16);
    ASSERT_TRUE(lo.is_ok());
    std::set<std::pair<int64_t, int64_t>> homes;
    for (int64_t j = 0; j < 200; ++j) {
      for (int32_t layer = 0; layer < 2; ++layer) {
        lo->locate_block_entry(0, layer, j, &block, &off);
        EXPECT_EQ(block, ((j + 1) * m - 1) / 16) << m << " " << j;
        EXPECT_GE(off, 0);
        EXPECT_LT(off + 8, lo->block_bytes + 1);
        EXPECT_TRUE(homes.insert({block, off}).second) << "m=" << m << " j=" << j;
      }
    }
  }
}

std::unique_ptr<KvCacheManager> toy_manager(int64_t bytes, bool prefix = true, int32_t block_size = 4) {
  testing::ToyModel m;
  auto layout = make_cache_layout(m.cache_groups(), block_size);
  KvCacheConfig c;
  c.kv_cache_bytes = bytes;
  c.max_num_seqs = 4;
  c.max_model_len = 64;
  c.enable_prefix_caching = prefix;
  auto r = KvCacheManager::create(*layout, c);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return std::move(r).value();
}

Sequence make_seq(std::vector<int32_t> t) {
  Sequence s;
  s.num_prompt_tokens = static_cast<int64_t>(t.size());
  s.token_ids = std::move(t);
  return s;
}

TEST(KvCacheManager, TooSmallBudgetIsAClearError) {
  testing::ToyModel m;
  auto layout = make_cache_layout(m.cache_groups(), 4);
  KvCacheConfig c;
  c.kv_cache_bytes = 1000;
  c.max_num_seqs = 4;
  c.max_model_len = 64;
  auto r = KvCacheManager::create(*layout, c);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("kv_cache_bytes"), std::string::npos);
}

TEST(KvCacheManager, PrefixHitOnlyAtCheckpointedBoundaryAndBlocksReturn) {
  auto kv = toy_manager(1 << 20);
  const int32_t total = kv->num_free_blocks();
  Sequence a = make_seq(toks(11));
  ASSERT_TRUE(kv->admit(a));
  EXPECT_EQ(a.num_computed_tokens, 0);
  // The checkpoint boundary is the last full block before the final token: 8.
  EXPECT_EQ(kv->checkpoint_boundary(a), 8);
  ASSERT_TRUE(kv->allocate(a, 8));
  a.num_computed_tokens = 8;
  kv->commit(a);
  ASSERT_TRUE(kv->allocate(a, 11));
  a.num_computed_tokens = 11;
  kv->commit(a);
  EXPECT_EQ(kv->stats().num_checkpoints, 1);

  Sequence b = make_seq(toks(13));  // same first 11 tokens
  ASSERT_TRUE(kv->admit(b));
  EXPECT_EQ(b.num_computed_tokens, 8);  // only up to the checkpoint, not to 12
  EXPECT_EQ(b.block_table[0], a.block_table[0]);
  EXPECT_EQ(b.block_table[1], a.block_table[1]);
  Sequence c = make_seq(toks(13, 2));  // different tokens: miss
  ASSERT_TRUE(kv->admit(c));
  EXPECT_EQ(c.num_computed_tokens, 0);
  kv->free(a);
  kv->free(b);
  kv->free(c);
  EXPECT_EQ(kv->num_free_blocks(), total);
}

// Device kernels address entries from paged_view alone; it must agree with entry() for every
// group kind (token blocks, compressed entries at rates that do or do not divide the block, the
// per-sequence slot) and every layer.
TEST(KvCacheManager, PagedViewLocatesEveryEntryLikeEntry) {
  const std::vector<CacheGroupSpec> groups = {
      {"full", CacheKind::kFull, 2, 12, 0, 1, 0},          {"ring", CacheKind::kSlidingRing, 3, 8, 5, 1, 0},
      {"c3", CacheKind::kCompressed, 2, 16, 0, 3, 0},      {"c4", CacheKind::kCompressed, 2, 8, 0, 4, 0},
      {"c128", CacheKind::kCompressed, 1, 8, 0, 128, 0},   {"state", CacheKind::kSlidingRing, 2, 40, 8, 1, 0},
      {"slot", CacheKind::kStateSlot, 1, 4, 0, 1, 3}};
  auto layout = make_cache_layout(groups, 16);
  ASSERT_TRUE(layout.is_ok());
  KvCacheConfig c;
  c.kv_cache_bytes = 4 << 20;
  c.max_num_seqs = 2;
  c.max_model_len = 400;
  auto kv = KvCacheManager::create(*layout, c);
  ASSERT_TRUE(kv.is_ok()) << kv.status().message();
  Sequence s = make_seq(toks(300));
  ASSERT_TRUE((*kv)->admit(s));
  ASSERT_TRUE((*kv)->allocate(s, 300));
  PagedSequenceCache cache = (*kv)->cache_view(s);
  for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g) {
    kernels::CacheView v;
    ASSERT_TRUE(cache.paged_view(g, &v)) << groups[g].name;
    EXPECT_FALSE(v.on_device);
    const int64_t n = cache_entries_needed(groups[g], 300);
    for (int32_t layer = 0; layer < groups[g].num_layers; ++layer)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t b = ((i + 1) * v.compress_rate - 1) / v.block_size;
        ASSERT_LT(b, v.num_blocks) << groups[g].name << " " << i;
        const uint8_t* p = v.base + layer * v.layer_stride + int64_t{v.block_ids[b]} * v.block_stride +
                           (i - b * v.block_size / v.compress_rate) * v.entry_bytes;
        ASSERT_EQ(p, cache.entry(g, layer, i)) << groups[g].name << " layer " << layer << " entry " << i;
      }
  }
  (*kv)->free(s);
}

TEST(KvCacheManager, ForkSharesFullBlocksAndCopiesThePartialOne) {
  auto kv = toy_manager(1 << 20);
  const int32_t total = kv->num_free_blocks();
  Sequence a = make_seq(toks(6));
  ASSERT_TRUE(kv->admit(a));
  ASSERT_TRUE(kv->allocate(a, 6));
  a.num_computed_tokens = 6;
  Sequence b = make_seq(toks(6));
  ASSERT_TRUE(kv->fork(a, b));
  EXPECT_EQ(b.block_table[0], a.block_table[0]);
  EXPECT_NE(b.block_table[1], a.block_table[1]);
  EXPECT_NE(b.slot, a.slot);
  EXPECT_EQ(b.num_computed_tokens, 6);
  kv->free(a);
  kv->free(b);
  EXPECT_EQ(kv->num_free_blocks(), total);
}

}  // namespace
}  // namespace di::engine
