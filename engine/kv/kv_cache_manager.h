// KvCacheManager: maps sequences onto the block pool and the slot pool, owns the cache memory,
// and runs prefix caching (chained block hashes for position-indexed groups, checkpoints for the
// per-sequence slot). Knows nothing of scheduling policy or sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/kv/block_pool.h"
#include "engine/kv/cache_layout.h"
#include "engine/kv/kv_cache_stats.h"
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

// The SequenceCache a sequence hands to the model: (group, layer, index) -> its block or slot.
class PagedSequenceCache final : public SequenceCache {
 public:
  PagedSequenceCache(const CacheLayout* layout, uint8_t* blocks, uint8_t* slot,
                     const std::vector<int32_t>* block_table, bool on_device = false)
      : layout_(layout), blocks_(blocks), slot_(slot), block_table_(block_table), on_device_(on_device) {}
  void* entry(int32_t group, int32_t layer, int64_t index) override;
  bool paged_view(int32_t group, kernels::CacheView* view) override;

 private:
  const CacheLayout* layout_;
  uint8_t* blocks_;
  uint8_t* slot_;
  const std::vector<int32_t>* block_table_;
  bool on_device_;
};

// Ring entries saved before a forward feeds draft positions (KvCacheManager::save_ring_entries),
// in the cache's own memory: host bytes, or device memory of the model's CacheMemory, kept for
// reuse by the next save into the same object (the runner keeps one per batch row).
class SavedRings {
 public:
  SavedRings() = default;
  SavedRings(SavedRings&& o) noexcept { *this = std::move(o); }
  SavedRings& operator=(SavedRings&& o) noexcept;
  SavedRings(const SavedRings&) = delete;
  SavedRings& operator=(const SavedRings&) = delete;
  ~SavedRings();
  int64_t bytes() const { return bytes_; }

 private:
  friend class KvCacheManager;
  CacheMemory* memory_ = nullptr;  // owner of data_
  uint8_t* data_ = nullptr;        // device memory
  int64_t capacity_ = 0;
  std::vector<uint8_t> host_;
  int64_t bytes_ = 0;
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
  // are saved (every ring group and layer, replacing what `saved` held), and after it those of the
  // rejected positions [keep_to, to) are put back. Position-indexed entries need no rollback: a
  // later forward rewrites them before anything reads them. Needs to - from <= the smallest ring.
  // In device memory both are copies on the model's stream (one per group and ring run), ordered
  // with its forwards; nothing waits for them.
  Status save_ring_entries(Sequence& seq, int64_t from, int64_t to, SavedRings& saved);
  Status restore_ring_entries(Sequence& seq, int64_t from, int64_t to, int64_t keep_to, const SavedRings& saved);
  // Returns the blocks past what `seq.num_computed_tokens + 1` tokens need (a rejected draft's).
  void trim(Sequence& seq);
  // The fewest entries of any sliding ring the layout has (0: none).
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
  // Copies the ring entries of positions [a, b) of every ring group and layer between the slot and
  // a save laid out [group][layer][position - from] with `n` positions a layer.
  enum class RingCopy { kSave, kRestore };
  Status copy_ring_runs(uint8_t* slot, uint8_t* saved, int64_t from, int64_t n, int64_t a, int64_t b, RingCopy dir);

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
