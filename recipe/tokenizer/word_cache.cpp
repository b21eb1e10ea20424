// Thread-local storage and insertion for WordCache.
#include "recipe/tokenizer/word_cache.h"

namespace di::recipe {

WordCache& WordCache::for_thread(uint64_t owner) {
  thread_local WordCache cache;
  if (cache.owner_ != owner) {
    cache.clear();
    cache.owner_ = owner;
  }
  return cache;
}

void WordCache::clear() {
  // Swapping with empties gives the memory back; clear() alone would keep the largest size.
  std::vector<Slot>().swap(slots_);
  std::string().swap(keys_);
  std::vector<int32_t>().swap(ids_);
  mask_ = 0;
  count_ = 0;
}

void WordCache::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? kMinSlots : old.size() * 2, Slot{});
  mask_ = slots_.size() - 1;
  // The stored 32-bit hash is enough to place a slot: the table never exceeds 2^32 slots.
  for (const Slot& s : old) {
    if (s.len == 0) continue;
    size_t i = s.hash & mask_;
    while (slots_[i].len != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void WordCache::insert(std::string_view word, const int32_t* ids, size_t n) {
  if (word.empty() || word.size() > kMaxWordBytes) return;
  if (count_ >= kMaxEntries) clear();
  if ((count_ + 1) * 2 > slots_.size()) grow();
  const uint64_t h = hash_bytes(word);
  size_t i = h & mask_;
  while (slots_[i].len != 0) {
    const Slot& s = slots_[i];
    if (s.hash == static_cast<uint32_t>(h) && s.len == word.size() &&
        std::memcmp(keys_.data() + s.key_off, word.data(), word.size()) == 0)
      return;
    i = (i + 1) & mask_;
  }
  Slot& s = slots_[i];
  s.hash = static_cast<uint32_t>(h);
  s.len = static_cast<uint32_t>(word.size());
  s.key_off = static_cast<uint32_t>(keys_.size());
  s.ids_off = static_cast<uint32_t>(ids_.size());
  s.ids_len = static_cast<uint32_t>(n);
  keys_.append(word);
  ids_.insert(ids_.end(), ids, ids + n);
  ++count_;
}

}  // namespace di::recipe
