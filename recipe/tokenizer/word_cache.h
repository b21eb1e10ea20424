// A per-thread cache of pre-token -> ids for one BPE model at a time, so that frequent words
// skip the merge loop. Bounded: when full it starts over. Knows nothing of how ids are made.
// Its table starts small and doubles as words arrive: embedding hosts run many threads (a Java
// service's request pool, Go's OS threads), and a thread that tokenizes one short chat must not
// keep megabytes of empty slots for the rest of its life.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/tokenizer/flat_tables.h"

namespace di::recipe {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 64;  // longer pieces are rare and not worth keeping
  static constexpr size_t kMaxEntries = 1 << 16;
  static constexpr size_t kMinSlots = 64;  // the first table; load stays at or under one half

  // The calling thread's cache for the model identified by `owner` (reset if it served another).
  static WordCache& for_thread(uint64_t owner);

  // Appends the cached ids of `word` to out and returns true, or returns false.
  bool lookup(std::string_view word, std::vector<int32_t>& out) const {
    if (count_ == 0) return false;
    const uint64_t h = hash_bytes(word);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.len == 0) return false;
      if (s.hash == static_cast<uint32_t>(h) && s.len == word.size() &&
          std::memcmp(keys_.data() + s.key_off, word.data(), word.size()) == 0) {
        out.insert(out.end(), ids_.begin() + s.ids_off, ids_.begin() + s.ids_off + s.ids_len);
        return true;
      }
    }
  }
  void insert(std::string_view word, const int32_t* ids, size_t n);

  // Bytes held by the table, keys and ids (capacity, not size): what the thread keeps.
  size_t bytes_held() const {
    return slots_.capacity() * sizeof(Slot) + keys_.capacity() + ids_.capacity() * sizeof(int32_t);
  }
  size_t size() const { return count_; }

 private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t len = 0;  // 0 = empty (empty words are never cached)
    uint32_t key_off = 0;
    uint32_t ids_off = 0;
    uint32_t ids_len = 0;
  };
  void clear();
  void grow();  // doubles the table and re-inserts every slot
  uint64_t owner_ = 0;
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<int32_t> ids_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace di::recipe
