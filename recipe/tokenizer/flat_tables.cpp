// Growth and insertion for the flat tables; lookups are inline in the header.
#include "recipe/tokenizer/flat_tables.h"

namespace di::recipe {
namespace {

size_t capacity_for(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;  // load factor <= 0.5 keeps probe runs short
  return cap;
}

// Both tables' growth: a fresh table with room for n entries (when the current one has none),
// every occupied slot of the old one re-placed by linear probing from hash_of(slot).
template <class Slot, class IsFree, class HashOf>
void rehash(std::vector<Slot>& slots, size_t& mask, size_t n, IsFree is_free, HashOf hash_of) {
  if (capacity_for(n) <= slots.size()) return;
  std::vector<Slot> old = std::move(slots);
  slots.assign(capacity_for(n), Slot{});
  mask = slots.size() - 1;
  for (const Slot& s : old) {
    if (is_free(s)) continue;
    size_t i = hash_of(s) & mask;
    while (!is_free(slots[i])) i = (i + 1) & mask;
    slots[i] = s;
  }
}

}  // namespace

void BytesToId::reserve(size_t n) {
  rehash(
      slots_, mask_, n, [](const Slot& s) { return s.id < 0; },
      [&](const Slot& s) { return hash_bytes(std::string_view(arena_.data() + s.off, s.len)); });
}

void BytesToId::grow() { reserve(slots_.empty() ? 8 : slots_.size()); }

bool BytesToId::insert(std::string_view key, int32_t id) {
  if ((count_ + 1) * 2 > slots_.size()) grow();
  const uint64_t h = hash_bytes(key);
  size_t i = h & mask_;
  for (;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.id < 0) break;
    if (s.hash == static_cast<uint32_t>(h) && s.len == key.size() &&
        std::memcmp(arena_.data() + s.off, key.data(), key.size()) == 0)
      return false;
  }
  Slot& s = slots_[i];
  s.hash = static_cast<uint32_t>(h);
  s.off = static_cast<uint32_t>(arena_.size());
  s.len = static_cast<uint32_t>(key.size());
  s.id = id;
  arena_.append(key);
  ++count_;
  return true;
}

void PairMerges::reserve(size_t n) {
  rehash(
      slots_, mask_, n, [](const Slot& s) { return s.key == kEmpty; },
      [](const Slot& s) { return mix(s.key); });
}

void PairMerges::grow() { reserve(slots_.empty() ? 8 : slots_.size()); }

void PairMerges::insert(int32_t left, int32_t right, Merge m) {
  if ((count_ + 1) * 2 > slots_.size()) grow();
  const uint64_t key = pack(left, right);
  size_t i = mix(key) & mask_;
  for (;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) {
      s.merge = m;
      return;
    }
    if (s.key == kEmpty) break;
  }
  slots_[i].key = key;
  slots_[i].merge = m;
  ++count_;
}

}  // namespace di::recipe
