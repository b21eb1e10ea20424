// CacheLayout: where each cache group of a model lives. Position-indexed groups (full, compressed)
// go into shared, hashable token blocks; per-sequence groups (sliding ring, compressor state) go
// into a private slot. Pure arithmetic: owns no memory and knows nothing of sequences.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/model/model.h"

namespace di::engine {

struct GroupPlacement {
  bool in_block = false;       // true: token blocks; false: the sequence's slot
  int64_t entries_per_unit = 0;  // entries of one layer in one block (or in the slot)
  int64_t offset = 0;          // byte offset of this group inside a block (or slot)
};

struct CacheLayout {
  int32_t block_size = 16;  // tokens per block
  std::vector<CacheGroupSpec> groups;
  std::vector<GroupPlacement> placement;
  int64_t block_bytes = 0;  // one token block, all block groups and layers
  int64_t slot_bytes = 0;   // one sequence slot, all slot groups and layers

  // Token blocks a sequence of `num_tokens` tokens needs.
  int64_t blocks_needed(int64_t num_tokens) const {
    return (num_tokens + block_size - 1) / block_size;
  }
  // The block of the sequence holding entry `index` of block group `group`, and the entry's byte
  // offset inside that block. A compressed entry lives in the block of its LAST source token, so a
  // full block's content depends only on the tokens up to its end (what its hash covers).
  void locate_block_entry(int32_t group, int32_t layer, int64_t index, int64_t* block,
                          int64_t* byte_offset) const;
  // Byte offset of entry `index` of slot group `group` inside a slot.
  int64_t slot_entry_offset(int32_t group, int32_t layer, int64_t index) const;
};

// Builds the layout. Fails when a spec is malformed.
Result<CacheLayout> make_cache_layout(const std::vector<CacheGroupSpec>& groups,
                                      int32_t block_size);

}  // namespace di::engine
