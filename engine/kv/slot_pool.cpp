// SlotPool: free list of sequence slots plus an LRU of checkpoint slots.
#include "engine/kv/slot_pool.h"

#include <stdexcept>

namespace di::engine {

SlotPool::SlotPool(int32_t num_slots) : num_slots_(num_slots) {
  for (int32_t s = num_slots - 1; s >= 0; --s) free_.push_back(s);
}

std::optional<int32_t> SlotPool::allocate() {
  if (free_.empty()) {
    if (lru_.empty()) return std::nullopt;
    const uint64_t key = lru_.front();
    lru_.pop_front();
    const int32_t slot = checkpoints_.at(key).slot;
    checkpoints_.erase(key);
    return slot;
  }
  const int32_t s = free_.back();
  free_.pop_back();
  return s;
}

void SlotPool::release(int32_t slot) {
  if (slot < 0 || slot >= num_slots_) throw std::logic_error("SlotPool::release: bad slot");
  free_.push_back(slot);
}

std::optional<int32_t> SlotPool::find_checkpoint(uint64_t key) {
  auto it = checkpoints_.find(key);
  if (it == checkpoints_.end()) return std::nullopt;
  lru_.splice(lru_.end(), lru_, it->second.lru);
  return it->second.slot;
}

std::optional<int32_t> SlotPool::add_checkpoint(uint64_t key) {
  if (checkpoints_.count(key)) return std::nullopt;
  std::optional<int32_t> slot = allocate();
  if (!slot) return std::nullopt;
  lru_.push_back(key);
  checkpoints_.emplace(key, Checkpoint{*slot, std::prev(lru_.end())});
  return slot;
}

}  // namespace di::engine
