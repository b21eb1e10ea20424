// The per-thread word cache: every word inserted is found with its ids as the table grows, a
// cache starts over when full, and a thread that cached a few words holds a few KiB, not the
// full table (embedding hosts run many tokenizing threads, each with its own cache).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "recipe/tokenizer/word_cache.h"

namespace di::recipe {
namespace {

std::string word(size_t i) { return "w" + std::to_string(i * 7919); }

TEST(WordCache, FindsEveryWordAcrossGrowth) {
  std::thread([] {
    WordCache& c = WordCache::for_thread(0xC0FFEE);
    for (size_t i = 0; i < 5000; ++i) {
      const int32_t ids[3] = {static_cast<int32_t>(i), static_cast<int32_t>(i + 1), 7};
      c.insert(word(i), ids, 1 + i % 3);
    }
    EXPECT_EQ(c.size(), 5000u);
    for (size_t i = 0; i < 5000; ++i) {
      std::vector<int32_t> out{-1};
      ASSERT_TRUE(c.lookup(word(i), out)) << word(i);
      std::vector<int32_t> want{-1, static_cast<int32_t>(i), static_cast<int32_t>(i + 1), 7};
      want.resize(2 + i % 3);
      EXPECT_EQ(out, want);
    }
    std::vector<int32_t> out;
    EXPECT_FALSE(c.lookup("absent", out));
    EXPECT_TRUE(out.empty());
  }).join();
}

TEST(WordCache, AFewWordsHoldAFewKilobytes) {
  std::thread([] {
    WordCache& c = WordCache::for_thread(0xBEEF);
    EXPECT_LT(c.bytes_held(), 64u);  // nothing allocated until the first word
    const int32_t id = 1;
    for (size_t i = 0; i < 20; ++i) c.insert(word(i), &id, 1);
    EXPECT_LT(c.bytes_held(), 4096u);
  }).join();
}

TEST(WordCache, StartsOverWhenFullAndWhenTheModelChanges) {
  std::thread([] {
    WordCache& c = WordCache::for_thread(1);
    const int32_t id = 3;
    for (size_t i = 0; i < WordCache::kMaxEntries; ++i) c.insert(word(i), &id, 1);
    EXPECT_EQ(c.size(), WordCache::kMaxEntries);
    const size_t full = c.bytes_held();
    c.insert("one more", &id, 1);
    EXPECT_EQ(c.size(), 1u);
    EXPECT_LT(c.bytes_held(), full / 100);  // the full table was given back
    std::vector<int32_t> out;
    EXPECT_TRUE(c.lookup("one more", out));
    EXPECT_FALSE(c.lookup(word(0), out));
    // Another model's cache on this thread: the old words must not answer for it.
    WordCache& other = WordCache::for_thread(2);
    EXPECT_EQ(&other, &c);
    EXPECT_EQ(other.size(), 0u);
    EXPECT_FALSE(other.lookup("one more", out));
  }).join();
}

TEST(WordCache, OversizedAndEmptyWordsAreNotKept) {
  std::thread([] {
    WordCache& c = WordCache::for_thread(5);
    const int32_t id = 1;
    c.insert("", &id, 1);
    c.insert(std::string(WordCache::kMaxWordBytes + 1, 'x'), &id, 1);
    EXPECT_EQ(c.size(), 0u);
    c.insert("same", &id, 1);
    c.insert("same", &id, 1);
    EXPECT_EQ(c.size(), 1u);
  }).join();
}

}  // namespace
}  // namespace di::recipe
