// cache_entries_needed and ContiguousSequenceCache: the seam's two concrete pieces (model.h).
#include <stdexcept>

#include "engine/model/model.h"

namespace di::engine {

int64_t cache_entries_needed(const CacheGroupSpec& spec, int64_t num_tokens) {
  if (num_tokens <= 0) return spec.kind == CacheKind::kStateSlot ? spec.state_entries : 0;
  switch (spec.kind) {
    case CacheKind::kFull:
      return num_tokens;
    case CacheKind::kSlidingRing:
      return num_tokens < spec.window ? num_tokens : spec.window;
    case CacheKind::kCompressed:
      return spec.compress_rate > 0 ? num_tokens / spec.compress_rate : 0;
    case CacheKind::kStateSlot:
      return spec.state_entries;
  }
  return 0;
}

ContiguousSequenceCache::ContiguousSequenceCache(std::vector<CacheGroupSpec> specs,
                                                 int64_t max_tokens)
    : specs_(std::move(specs)) {
  storage_.resize(specs_.size());
  for (size_t g = 0; g < specs_.size(); ++g) {
    const int64_t entries = cache_entries_needed(specs_[g], max_tokens);
    storage_[g].resize(static_cast<size_t>(specs_[g].num_layers));
    for (auto& layer : storage_[g]) layer.resize(static_cast<size_t>(entries * specs_[g].entry_bytes));
  }
}

void* ContiguousSequenceCache::entry(int32_t group, int32_t layer, int64_t index) {
  if (group < 0 || static_cast<size_t>(group) >= storage_.size() || layer < 0 ||
      static_cast<size_t>(layer) >= storage_[group].size())
    throw std::out_of_range("ContiguousSequenceCache: no group/layer " + std::to_string(group) +
                            "/" + std::to_string(layer));
  auto& bytes = storage_[group][layer];
  const int64_t eb = specs_[group].entry_bytes;
  if (index < 0 || (index + 1) * eb > static_cast<int64_t>(bytes.size()))
    throw std::out_of_range("ContiguousSequenceCache: entry " + std::to_string(index) +
                            " of group '" + specs_[group].name + "' is past the reserved " +
                            std::to_string(bytes.size() / (eb ? eb : 1)));
  return bytes.data() + index * eb;
}

}  // namespace di::engine
