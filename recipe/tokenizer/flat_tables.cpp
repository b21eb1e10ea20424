// Growth and insertion for the flat tables; lookups are inline in the header.
#include "recipe/tokenizer/flat_tables.h"

namespace di::recipe {
namespace {

size_t capacity_for(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;  // load factor <= 0.5 keeps probe runs short
  return cap;
}

}  // namespace

void BytesToId::reserve(size_t n) {
  if (capacity_for(n) <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity_for(n), Slot{});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id < 0) continue;
    std::string_view key(arena_.data() + s.off, s.len);
    size_t i = hash_bytes(key) & mask_;
    while (slots_[i].id >= 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
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
  if (capacity_for(n) <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity_for(n), Slot{});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.key == kEmpty) continue;
    size_t i = mix(s.key) & mask_;
    while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
    slots_[i] = s;
  }
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
