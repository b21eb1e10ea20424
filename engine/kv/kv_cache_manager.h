// KvCacheManager: maps sequences onto the block pool and the slot pool, owns the cache memory,
// and runs prefix caching (chained block hashes for position-indexed groups, checkpoints for the
// per-sequence slot). Knows nothing of scheduling policy or sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "engine/kv/block_pool.h"
#include "engine/kv/cache_layout.h"
#include "engine/kv/slot_pool.h"
#include "engine/model/model.h"
#include "engine/sequence.h"

namespace di::engine {

struct KvCacheConfig {
  int64_t kv_cache_bytes = 0;
  int32_t max_num_seqs = 64;
  int64_t max_model_len = 0;
  bool enable_prefix_caching = true;
  CacheMemory* memory = nullptr;  // the model's device memory; null: host memory
};

struct KvCacheStats {
  int32_t num_blocks = 0;
  int32_t num_free_blocks = 0;
  int32_t num_cached_blocks = 0;
  int32_t num_slots = 0;
  int32_t num_checkpoints = 0;
  int64_t prefix_queries = 0;      // prompt tokens looked up
  int64_t prefix_hits = 0;         // prompt tokens served from the cache
};

// The SequenceCache a sequence hands to the model: (group, layer, index) -> its block or slot.
class PagedSequenceCache final : public SequenceCache {
 public:
  PagedSequenceCache(const CacheLayout* layout, uint8_t* blocks, uint8_t* slot,
                     const std::vector<int32_t>* block_table, bool on_device = false)
      : layout_(layout), blocks_(blocks), slot_(slot), block_table_(block_table), on_device_(on_device) {}
  void* entry(int32_t group, int32_t layer, int64_t index) override;
  bool paged_view(int32_t group, PagedGroupView* view) override;

 private:
  const CacheLayout* layout_;
  uint8_t* blocks_;
  uint8_t* slot_;
  const std::vector<int32_t>* block_table_;
  bool on_device_;
};

class KvCacheManager {
 public:
  // Sizes blocks and slots from config.kv_cache_bytes: one slot per sequence that may run plus
  // as many for checkpoints (when prefix caching is on and the model has slot groups), the rest
  // in blocks. Fails with a message giving the numbers when one max_model_len sequence won't fit.
  static Result<std::unique_ptr<KvCacheManager>> create(CacheLayout layout,
                                                        const KvCacheConfig& config);
  ~KvCacheManager();

  const CacheLayout& layout() const { return layout_; }
  int32_t num_free_blocks() const { return pool_.num_free(); }
  int32_t num_blocks() const { return pool_.num_blocks(); }
  KvCacheStats stats() const;

  // Gives a waiting sequence its slot and its prefix-cache hit (blocks taken, slot restored from
  // the checkpoint); sets num_computed_tokens to the hit length. False when no slot is free.
  bool admit(Sequence& seq);
  // Records the first successful admission's prefix hit in the stats and in the sequence.
  void note_admitted(Sequence& seq);
  // Ensures blocks for the first `num_tokens` tokens. On false nothing changed.
  bool allocate(Sequence& seq, int64_t num_tokens);
  // Blocks `allocate(seq, num_tokens)` would take now.
  int64_t blocks_to_allocate(const Sequence& seq, int64_t num_tokens) const;
  // Returns the sequence's blocks and slot (resetting its cache fields and num_computed_tokens).
  void free(Sequence& seq);
  // After a forward: makes newly full blocks findable and takes a checkpoint at the boundary.
  void commit(Sequence& seq);
  // The position a prefill chunk should stop at so a checkpoint can be taken there, or -1.
  int64_t checkpoint_boundary(Sequence& seq);
  // Gives `child` the cache state of `parent` (full blocks shared, partial block and slot copied).
  // False when no block or slot is free; the child is then left without cache state.
  bool fork(const Sequence& parent, Sequence& child);

  PagedSequenceCache cache_view(Sequence& seq);

  // Speculative decoding's rollback. A sliding ring (and the compressor state kept as one) is
  // overwritten in place, so before a forward feeds draft positions [from, to) their ring entries
  // are saved (every ring group and layer, appended to `saved`), and after it those of the
  // rejected positions [keep_to, to) are put back. Position-indexed entries need no rollback: a
  // later forward rewrites them before anything reads them. Needs to - from <= the smallest ring.
  void save_ring_entries(Sequence& seq, int64_t from, int64_t to, std::vector<uint8_t>& saved);
  void restore_ring_entries(Sequence& seq, int64_t from, int64_t to, int64_t keep_to, const uint8_t* saved);
  // Returns the blocks past what `seq.num_computed_tokens + 1` tokens need (a rejected draft's).
  void trim(Sequence& seq);
  // The fewest entries of any sliding ring the layout has (0: none); host memory only.
  int64_t smallest_ring() const;

 private:
  KvCacheManager(CacheLayout layout, const KvCacheConfig& config, int32_t num_blocks,
                 int32_t num_slots);
  void update_block_hashes(Sequence& seq, int64_t num_tokens);
  int64_t checkpoint_position(const Sequence& seq) const;
  bool has_slot_groups() const { return layout_.slot_bytes > 0; }
  uint8_t* block_ptr(int32_t b) { return blocks_ + static_cast<size_t>(b) * layout_.block_bytes; }
  uint8_t* slot_ptr(int32_t s) { return slots_ + static_cast<size_t>(s) * layout_.slot_bytes; }
  Result<uint8_t*> allocate_zeroed(int64_t bytes);
  void release(uint8_t* p);
  void copy_bytes(uint8_t* dst, const uint8_t* src, int64_t bytes);

  CacheLayout layout_;
  KvCacheConfig config_;
  BlockPool pool_;
  SlotPool slots_pool_;
  uint8_t* blocks_ = nullptr;  // num_blocks * block_bytes, zeroed
  uint8_t* slots_ = nullptr;   // num_slots * slot_bytes, zeroed
  int64_t prefix_queries_ = 0;
  int64_t prefix_hits_ = 0;
};

}  // namespace di::engine
