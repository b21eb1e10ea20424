// BlockPool: refcounts, free list, LRU of freed cached blocks, hash index.
#include "engine/kv/block_pool.h"

#include <algorithm>
#include <stdexcept>

namespace di::engine {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser: a strong 64-bit bijection
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens) {
  uint64_t h = mix(parent_hash ^ 0x6a09e667f3bcc908ULL);
  for (int32_t t : tokens) h = mix(h ^ static_cast<uint32_t>(t));
  return mix(h ^ tokens.size());
}

BlockPool::BlockPool(int32_t num_blocks) : blocks_(num_blocks) {
  free_.reserve(num_blocks);
  // Stack order: block 0 is handed out first.
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
}

std::optional<int32_t> BlockPool::allocate() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!evictable_.empty()) {
    b = evictable_.front();
    evictable_.pop_front();
    drop_hash(b);
  } else {
    return std::nullopt;
  }
  blocks_[b].refcount = 1;
  return b;
}

void BlockPool::ref(int32_t block) {
  Meta& m = blocks_[block];
  if (m.refcount == 0) throw std::logic_error("BlockPool::ref on a free block");
  ++m.refcount;
}

void BlockPool::unref(int32_t block) {
  Meta& m = blocks_[block];
  if (m.refcount <= 0) throw std::logic_error("BlockPool::unref on a free block");
  if (--m.refcount > 0) return;
  if (m.hashed) {
    evictable_.push_back(block);
    m.lru = std::prev(evictable_.end());
  } else {
    free_.push_back(block);
  }
}

std::optional<int32_t> BlockPool::acquire_cached(uint64_t hash, uint64_t parent_hash,
                                                 std::span<const int32_t> tokens) {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  Meta& m = blocks_[it->second];
  if (m.parent_hash != parent_hash || !std::equal(tokens.begin(), tokens.end(), m.tokens.begin(), m.tokens.end()))
    return std::nullopt;
  if (m.refcount == 0) evictable_.erase(m.lru);
  ++m.refcount;
  return it->second;
}

void BlockPool::register_hash(int32_t block, uint64_t hash, uint64_t parent_hash,
                              std::span<const int32_t> tokens) {
  Meta& m = blocks_[block];
  if (m.hashed || by_hash_.count(hash)) return;
  m.hashed = true;
  m.hash = hash;
  m.parent_hash = parent_hash;
  m.tokens.assign(tokens.begin(), tokens.end());
  by_hash_.emplace(hash, block);
}

void BlockPool::drop_hash(int32_t block) {
  Meta& m = blocks_[block];
  if (!m.hashed) return;
  by_hash_.erase(m.hash);
  m.hashed = false;
  m.tokens.clear();
}

}  // namespace di::engine
