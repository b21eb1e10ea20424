// BlockPool: fixed-size KV blocks, their refcounts, the free list and the prefix-cache index
// (chained block hash -> block). A freed block that carries a hash stays findable until it is
// reused, oldest first (LRU). Knows nothing of sequences, models or memory layout.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace di::engine {

// Chains a block's hash onto its parent's: block i's hash covers tokens 0..(i+1)*block_size-1.
uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens);

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  // Blocks an allocate() can return now: never used, freed, or cached with refcount 0.
  int32_t num_free() const { return static_cast<int32_t>(free_.size() + evictable_.size()); }
  int32_t num_cached() const { return static_cast<int32_t>(by_hash_.size()); }

  // Takes a block with refcount 1. Prefers never-cached blocks; otherwise evicts the least
  // recently freed cached block (dropping its hash). nullopt when none is free.
  std::optional<int32_t> allocate();
  void ref(int32_t block);
  // Drops one reference; at zero the block becomes free (cached blocks go to the LRU end).
  void unref(int32_t block);
  int32_t refcount(int32_t block) const { return blocks_[block].refcount; }

  // The cached block with this hash whose parent hash and tokens match, taking a reference
  // (reviving it from the free LRU when its refcount was zero); nullopt on a miss.
  std::optional<int32_t> acquire_cached(uint64_t hash, uint64_t parent_hash,
                                        std::span<const int32_t> tokens);
  // True when a block with this hash is cached (no reference taken).
  bool is_cached(uint64_t hash) const { return by_hash_.count(hash) != 0; }
  // Makes a full, computed block findable by its hash. A block already carrying a hash, or a
  // hash already owned by another block, is left as it is.
  void register_hash(int32_t block, uint64_t hash, uint64_t parent_hash,
                     std::span<const int32_t> tokens);

 private:
  struct Meta {
    int32_t refcount = 0;
    bool hashed = false;
    uint64_t hash = 0;
    uint64_t parent_hash = 0;
    std::vector<int32_t> tokens;  // to reject hash collisions
    std::list<int32_t>::iterator lru;  // valid while hashed && refcount == 0
  };
  void drop_hash(int32_t block);

  std::vector<Meta> blocks_;
  std::vector<int32_t> free_;       // uncached free blocks (a stack)
  std::list<int32_t> evictable_;    // cached blocks with refcount 0, least recently freed first
  std::unordered_map<uint64_t, int32_t> by_hash_;
};

}  // namespace di::engine
