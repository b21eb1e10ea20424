// SlotPool: per-sequence slots for the cache groups that are not position-indexed (sliding
// rings, compressor state), and prefix-cache checkpoints of such slots keyed by the hash of the
// block boundary they were taken at. Knows nothing of memory layout or sequences.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace di::engine {

class SlotPool {
 public:
  explicit SlotPool(int32_t num_slots);

  int32_t num_slots() const { return num_slots_; }
  int32_t num_checkpoints() const { return static_cast<int32_t>(checkpoints_.size()); }
  // Slots a sequence could take now (free ones plus checkpoints that may be evicted).
  int32_t num_available() const { return static_cast<int32_t>(free_.size() + checkpoints_.size()); }

  // Takes a slot for a sequence: a free one, else evicts the least recently used checkpoint.
  std::optional<int32_t> allocate();
  void release(int32_t slot);

  // The checkpoint taken at the boundary with this block hash (marking it recently used).
  std::optional<int32_t> find_checkpoint(uint64_t key);
  bool has_checkpoint(uint64_t key) const { return checkpoints_.count(key) != 0; }
  // Takes a slot to hold a new checkpoint for `key` (the caller copies into it). Only a free slot
  // or the oldest other checkpoint is used, never a running sequence's slot.
  std::optional<int32_t> add_checkpoint(uint64_t key);

 private:
  struct Checkpoint {
    int32_t slot;
    std::list<uint64_t>::iterator lru;
  };
  int32_t num_slots_;
  std::vector<int32_t> free_;
  std::unordered_map<uint64_t, Checkpoint> checkpoints_;
  std::list<uint64_t> lru_;  // checkpoint keys, least recently used first
};

}  // namespace di::engine
