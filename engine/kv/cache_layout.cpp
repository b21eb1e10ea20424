// CacheLayout arithmetic: group placement inside blocks and slots.
#include "engine/kv/cache_layout.h"

#include <string>

namespace di::engine {
namespace {

constexpr int64_t kAlign = 64;  // each group starts on a cache line

int64_t align_up(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void CacheLayout::locate_block_entry(int32_t group, int32_t layer, int64_t index, int64_t* block,
                                     int64_t* byte_offset) const {
  const CacheGroupSpec& g = groups[group];
  const GroupPlacement& p = placement[group];
  int64_t in_block;
  if (g.kind == CacheKind::kCompressed) {
    const int64_t last_token = (index + 1) * g.compress_rate - 1;
    *block = last_token / block_size;
    in_block = index - *block * block_size / g.compress_rate;  // the block's first entry is floor(b*bs/m)
  } else {
    *block = index / block_size;
    in_block = index % block_size;
  }
  *byte_offset = p.offset + (layer * p.entries_per_unit + in_block) * g.entry_bytes;
}

int64_t CacheLayout::slot_entry_offset(int32_t group, int32_t layer, int64_t index) const {
  const GroupPlacement& p = placement[group];
  return p.offset + (layer * p.entries_per_unit + index) * groups[group].entry_bytes;
}

Result<CacheLayout> make_cache_layout(const std::vector<CacheGroupSpec>& groups,
                                      int32_t block_size) {
  if (block_size <= 0) return Status::invalid_argument("block_size: expected > 0, got " + std::to_string(block_size));
  CacheLayout layout;
  layout.block_size = block_size;
  layout.groups = groups;
  for (size_t i = 0; i < groups.size(); ++i) {
    const CacheGroupSpec& g = groups[i];
    const std::string where = "cache group " + std::to_string(i) + " (" + g.name + ")";
    if (g.num_layers <= 0 || g.entry_bytes <= 0)
      return Status::invalid_argument(where + ": num_layers and entry_bytes must be > 0");
    GroupPlacement p;
    switch (g.kind) {
      case CacheKind::kFull:
        p.in_block = true;
        p.entries_per_unit = block_size;
        break;
      case CacheKind::kCompressed: {
        const int32_t m = g.compress_rate;
        if (m <= 0) return Status::invalid_argument(where + ": compress_rate must be > 0");
        p.in_block = true;
        // At most ceil(bs / m) entries end inside one block.
        p.entries_per_unit = (block_size + m - 1) / m;
        break;
      }
      case CacheKind::kSlidingRing:
        if (g.window <= 0) return Status::invalid_argument(where + ": window must be > 0");
        p.entries_per_unit = g.window;
        break;
      case CacheKind::kStateSlot:
        if (g.state_entries <= 0) return Status::invalid_argument(where + ": state_entries must be > 0");
        p.entries_per_unit = g.state_entries;
        break;
    }
    int64_t& total = p.in_block ? layout.block_bytes : layout.slot_bytes;
    p.offset = total;
    total = align_up(total + p.entries_per_unit * g.num_layers * g.entry_bytes);
    layout.placement.push_back(p);
  }
  return layout;
}

}  // namespace di::engine
