// Open-addressing hash tables for the encoder's hot path: byte string -> token id, and a pair
// of token ids -> merge (rank, result). Insert-only, built at load time; no deletion.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace di::recipe {

// A fast hash for short byte strings, 8 bytes per step (not for adversarial keys).
inline uint64_t hash_bytes(std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0xA0761D6478BD642Full ^ (s.size() * kMul);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

// Byte string -> int32 id. The first insert of a key wins.
class BytesToId {
 public:
  void reserve(size_t n);
  // Returns false when the key was already present (the table is unchanged).
  bool insert(std::string_view key, int32_t id);
  // Returns the id or -1.
  int32_t find(std::string_view key) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash_bytes(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.hash == static_cast<uint32_t>(h) && s.len == key.size() &&
          std::memcmp(arena_.data() + s.off, key.data(), key.size()) == 0)
        return s.id;
    }
  }
  size_t size() const { return count_; }

 private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t off = 0;
    uint32_t len = 0;
    int32_t id = -1;
  };
  void grow();
  std::vector<Slot> slots_;
  std::string arena_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

// (left id, right id) -> (merge rank, merged id). A later insert of the same pair replaces the
// earlier one, as Hugging Face's map built from the merges list does.
class PairMerges {
 public:
  struct Merge {
    uint32_t rank;
    int32_t id;
  };
  void reserve(size_t n);
  void insert(int32_t left, int32_t right, Merge m);
  // Returns nullptr when the pair has no merge.
  const Merge* find(int32_t left, int32_t right) const {
    if (slots_.empty()) return nullptr;
    const uint64_t key = pack(left, right);
    for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.merge;
      if (s.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return count_; }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge{};
  };
  static uint64_t pack(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  static uint64_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    k ^= k >> 33;
    return k;
  }
  void grow();
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace di::recipe
