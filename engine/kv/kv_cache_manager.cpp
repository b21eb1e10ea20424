// KvCacheManager: block tables, slots, prefix hits and checkpoints.
//
// Why checkpoints: a sliding ring is overwritten as a sequence grows and the compressor state
// depends on the tail, so neither can be rebuilt from shared blocks. A prefix hit is therefore
// taken only at a block boundary where the ring and state were saved (a checkpoint), and it
// restores exactly what a fresh prefill of those tokens leaves behind. Models without slot
// groups can hit at any full block.
#include "engine/kv/kv_cache_manager.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

namespace di::engine {

void* PagedSequenceCache::entry(int32_t group, int32_t layer, int64_t index) {
  if (group < 0 || group >= static_cast<int32_t>(layout_->groups.size()))
    throw std::out_of_range("SequenceCache::entry: group " + std::to_string(group));
  if (layer < 0 || layer >= layout_->groups[group].num_layers || index < 0)
    throw std::out_of_range("SequenceCache::entry: layer/index out of range");
  if (layout_->placement[group].in_block) {
    int64_t block, offset;
    layout_->locate_block_entry(group, layer, index, &block, &offset);
    if (block >= static_cast<int64_t>(block_table_->size()))
      throw std::out_of_range("SequenceCache::entry: " + layout_->groups[group].name + "[" +
                              std::to_string(index) + "] is past the sequence's blocks");
    return blocks_ + static_cast<size_t>((*block_table_)[block]) * layout_->block_bytes + offset;
  }
  if (index >= layout_->placement[group].entries_per_unit)
    throw std::out_of_range("SequenceCache::entry: " + layout_->groups[group].name + "[" +
                            std::to_string(index) + "] is past its slot");
  return slot_ + layout_->slot_entry_offset(group, layer, index);
}

bool PagedSequenceCache::paged_view(int32_t group, kernels::CacheView* view) {
  if (group < 0 || group >= static_cast<int32_t>(layout_->groups.size())) return false;
  const CacheGroupSpec& g = layout_->groups[group];
  const GroupPlacement& p = layout_->placement[group];
  static const int32_t kSlotBlock = 0;
  view->layer_stride = p.entries_per_unit * g.entry_bytes;
  view->entry_bytes = g.entry_bytes;
  view->on_device = on_device_;
  if (!p.in_block) {  // the sequence's slot: one block of entries_per_unit entries per layer
    if (!slot_) return false;
    view->base = slot_ + p.offset;
    view->block_stride = 0;
    view->block_size = static_cast<int32_t>(p.entries_per_unit);
    view->compress_rate = 1;
    view->block_ids = &kSlotBlock;
    view->num_blocks = 1;
    return true;
  }
  view->base = blocks_ + p.offset;
  view->block_stride = layout_->block_bytes;
  view->block_size = layout_->block_size;
  // Same placement rule as CacheLayout::locate_block_entry.
  view->compress_rate = g.kind == CacheKind::kCompressed ? g.compress_rate : 1;
  view->block_ids = block_table_->data();
  view->num_blocks = static_cast<int64_t>(block_table_->size());
  return true;
}

Result<uint8_t*> KvCacheManager::allocate_zeroed(int64_t bytes) {
  if (config_.memory) return config_.memory->allocate_zeroed(bytes);
  auto* p = static_cast<uint8_t*>(std::calloc(static_cast<size_t>(bytes), 1));
  if (!p) return Status::out_of_memory("kv cache: cannot allocate " + std::to_string(bytes) + " bytes");
  return p;
}

void KvCacheManager::release(uint8_t* p) {
  if (!p) return;
  if (config_.memory) {
    config_.memory->release(p);
  } else {
    std::free(p);
  }
}

void KvCacheManager::copy_bytes(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  if (!config_.memory) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  // A failed device copy means a broken device, not bad input: a bug-class failure.
  const Status st = config_.memory->copy(dst, src, bytes);
  if (!st.is_ok()) throw std::runtime_error("kv cache copy: " + st.message());
}

Result<std::unique_ptr<KvCacheManager>> KvCacheManager::create(CacheLayout layout,
                                                               const KvCacheConfig& config) {
  if (config.max_num_seqs < 1) return Status::invalid_argument("max_num_seqs: expected >= 1");
  if (config.max_model_len < 1) return Status::invalid_argument("max_model_len: expected >= 1");
  if (config.kv_cache_bytes <= 0)
    return Status::invalid_argument("kv_cache_bytes: expected > 0, got " + std::to_string(config.kv_cache_bytes));
  const int64_t slots_per_seq = layout.slot_bytes > 0 ? 1 : 0;
  const int64_t num_slots =
      slots_per_seq * config.max_num_seqs * (config.enable_prefix_caching ? 2 : 1);
  const int64_t slot_total = num_slots * layout.slot_bytes;
  const int64_t per_seq_blocks = layout.blocks_needed(config.max_model_len);
  int64_t num_blocks;
  if (layout.block_bytes > 0) {
    if (slot_total >= config.kv_cache_bytes)
      return Status::limit("kv_cache_bytes: " + std::to_string(config.kv_cache_bytes) +
                           " bytes do not even hold the " + std::to_string(num_slots) +
                           " sequence slots of " + std::to_string(layout.slot_bytes) + " bytes");
    num_blocks = (config.kv_cache_bytes - slot_total) / layout.block_bytes;
  } else {
    num_blocks = per_seq_blocks * config.max_num_seqs;  // blocks hold nothing; only bookkeeping
  }
  num_blocks = std::min<int64_t>(num_blocks, std::numeric_limits<int32_t>::max() / 2);
  if (num_blocks < per_seq_blocks)
    return Status::limit("kv_cache_bytes: " + std::to_string(config.kv_cache_bytes) + " bytes hold " +
                         std::to_string(num_blocks) + " blocks of " + std::to_string(layout.block_size) +
                         " tokens (" + std::to_string(layout.block_bytes) + " bytes each) besides " +
                         std::to_string(num_slots) + " slots; one sequence of max_model_len " +
                         std::to_string(config.max_model_len) + " needs " + std::to_string(per_seq_blocks));
  std::unique_ptr<KvCacheManager> m;
  try {
    m.reset(new KvCacheManager(std::move(layout), config, static_cast<int32_t>(num_blocks),
                               static_cast<int32_t>(num_slots)));
  } catch (const std::bad_alloc&) {  // the pools' bookkeeping for a budget the host cannot hold
    return Status::out_of_memory("kv_cache_bytes: " + std::to_string(config.kv_cache_bytes) + " bytes make " +
                                 std::to_string(num_blocks) + " blocks, more than this host can track");
  }
  const size_t block_total = static_cast<size_t>(num_blocks) * m->layout_.block_bytes;
  if (block_total > 0) {
    DI_ASSIGN_OR_RETURN(m->blocks_, m->allocate_zeroed(static_cast<int64_t>(block_total)));
  }
  if (slot_total > 0) {
    DI_ASSIGN_OR_RETURN(m->slots_, m->allocate_zeroed(slot_total));
  }
  return m;
}

KvCacheManager::KvCacheManager(CacheLayout layout, const KvCacheConfig& config,
                               int32_t num_blocks, int32_t num_slots)
    : layout_(std::move(layout)), config_(config), pool_(num_blocks), slots_pool_(num_slots) {}

KvCacheManager::~KvCacheManager() {
  release(blocks_);
  release(slots_);
}

KvCacheStats KvCacheManager::stats() const {
  KvCacheStats s;
  s.num_blocks = pool_.num_blocks();
  s.num_free_blocks = pool_.num_free();
  s.num_cached_blocks = pool_.num_cached();
  s.num_slots = slots_pool_.num_slots();
  s.num_checkpoints = slots_pool_.num_checkpoints();
  s.prefix_queries = prefix_queries_;
  s.prefix_hits = prefix_hits_;
  return s;
}

void KvCacheManager::update_block_hashes(Sequence& seq, int64_t num_tokens) {
  const int64_t bs = layout_.block_size;
  const int64_t full = std::min(num_tokens, seq.num_tokens()) / bs;
  while (static_cast<int64_t>(seq.block_hashes.size()) < full) {
    const int64_t i = static_cast<int64_t>(seq.block_hashes.size());
    const uint64_t parent = i == 0 ? 0 : seq.block_hashes[i - 1];
    seq.block_hashes.push_back(hash_block_tokens(
        parent, std::span<const int32_t>(seq.token_ids.data() + i * bs, static_cast<size_t>(bs))));
  }
}

bool KvCacheManager::admit(Sequence& seq) {
  if (seq.slot >= 0 || !seq.block_table.empty()) throw std::logic_error("admit: sequence already holds cache");
  int32_t slot = -1;
  if (has_slot_groups()) {
    std::optional<int32_t> s = slots_pool_.allocate();
    if (!s) return false;
    slot = *s;
  }
  seq.slot = slot;
  seq.num_computed_tokens = 0;
  if (!config_.enable_prefix_caching) return true;

  // At least the last token is always computed: its logits are needed.
  const int64_t bs = layout_.block_size;
  const int64_t limit_blocks = (seq.num_tokens() - 1) / bs;
  update_block_hashes(seq, limit_blocks * bs);
  int64_t usable = 0;
  std::optional<int32_t> checkpoint;
  for (int64_t i = 0; i < limit_blocks; ++i) {
    const uint64_t parent = i == 0 ? 0 : seq.block_hashes[i - 1];
    std::optional<int32_t> b = pool_.acquire_cached(
        seq.block_hashes[i], parent,
        std::span<const int32_t>(seq.token_ids.data() + i * bs, static_cast<size_t>(bs)));
    if (!b) break;
    seq.block_table.push_back(*b);
    if (!has_slot_groups()) {
      usable = i + 1;
    } else if (slots_pool_.has_checkpoint(seq.block_hashes[i])) {
      usable = i + 1;
    }
  }
  // Keep only the blocks up to the deepest restorable boundary.
  while (static_cast<int64_t>(seq.block_table.size()) > usable) {
    pool_.unref(seq.block_table.back());
    seq.block_table.pop_back();
  }
  if (usable > 0 && has_slot_groups()) {
    checkpoint = slots_pool_.find_checkpoint(seq.block_hashes[usable - 1]);
    copy_bytes(slot_ptr(slot), slot_ptr(*checkpoint), layout_.slot_bytes);
  }
  seq.num_computed_tokens = usable * bs;
  seq.num_registered_blocks = usable;
  return true;
}

void KvCacheManager::note_admitted(Sequence& seq) {
  if (seq.admitted_once) return;
  seq.admitted_once = true;
  prefix_queries_ += seq.num_prompt_tokens;
  seq.num_cached_prompt_tokens = std::min<int64_t>(seq.num_computed_tokens, seq.num_prompt_tokens);
  prefix_hits_ += seq.num_cached_prompt_tokens;
}

int64_t KvCacheManager::blocks_to_allocate(const Sequence& seq, int64_t num_tokens) const {
  return std::max<int64_t>(0, layout_.blocks_needed(num_tokens) - static_cast<int64_t>(seq.block_table.size()));
}

bool KvCacheManager::allocate(Sequence& seq, int64_t num_tokens) {
  const int64_t need = blocks_to_allocate(seq, num_tokens);
  if (need > pool_.num_free()) return false;
  for (int64_t i = 0; i < need; ++i) seq.block_table.push_back(*pool_.allocate());
  return true;
}

void KvCacheManager::free(Sequence& seq) {
  // Free in reverse so the tail blocks (least likely shared) are evicted first.
  for (auto it = seq.block_table.rbegin(); it != seq.block_table.rend(); ++it) pool_.unref(*it);
  seq.block_table.clear();
  if (seq.slot >= 0) slots_pool_.release(seq.slot);
  seq.slot = -1;
  seq.num_computed_tokens = 0;
  seq.num_registered_blocks = 0;
}

int64_t KvCacheManager::checkpoint_position(const Sequence& seq) const {
  const int64_t bs = layout_.block_size;
  return (seq.num_prompt_tokens - 1) / bs * bs;
}

int64_t KvCacheManager::checkpoint_boundary(Sequence& seq) {
  if (!config_.enable_prefix_caching || !has_slot_groups()) return -1;
  const int64_t p = checkpoint_position(seq);
  if (p <= seq.num_computed_tokens) return -1;
  update_block_hashes(seq, p);
  if (slots_pool_.has_checkpoint(seq.block_hashes[p / layout_.block_size - 1])) return -1;
  return p;
}

void KvCacheManager::commit(Sequence& seq) {
  if (!config_.enable_prefix_caching) return;
  const int64_t bs = layout_.block_size;
  update_block_hashes(seq, seq.num_computed_tokens);
  const int64_t full = seq.num_computed_tokens / bs;
  for (int64_t i = seq.num_registered_blocks; i < full; ++i) {
    const uint64_t parent = i == 0 ? 0 : seq.block_hashes[i - 1];
    pool_.register_hash(seq.block_table[i], seq.block_hashes[i], parent,
                        std::span<const int32_t>(seq.token_ids.data() + i * bs, static_cast<size_t>(bs)));
  }
  seq.num_registered_blocks = std::max(seq.num_registered_blocks, full);
  if (has_slot_groups() && seq.num_computed_tokens > 0 &&
      seq.num_computed_tokens == checkpoint_position(seq)) {
    const uint64_t key = seq.block_hashes[seq.num_computed_tokens / bs - 1];
    if (std::optional<int32_t> cp = slots_pool_.add_checkpoint(key))
      copy_bytes(slot_ptr(*cp), slot_ptr(seq.slot), layout_.slot_bytes);
  }
}

bool KvCacheManager::fork(const Sequence& parent, Sequence& child) {
  const int64_t bs = layout_.block_size;
  const int64_t computed = parent.num_computed_tokens;
  const int64_t full = computed / bs;
  const bool partial = computed % bs != 0;
  if (partial && pool_.num_free() < 1) return false;
  int32_t slot = -1;
  if (has_slot_groups()) {
    std::optional<int32_t> s = slots_pool_.allocate();
    if (!s) return false;
    slot = *s;
    copy_bytes(slot_ptr(slot), slot_ptr(parent.slot), layout_.slot_bytes);
  }
  child.slot = slot;
  child.block_table.clear();
  for (int64_t i = 0; i < full; ++i) {
    pool_.ref(parent.block_table[i]);
    child.block_table.push_back(parent.block_table[i]);
  }
  if (partial) {
    const int32_t b = *pool_.allocate();
    if (layout_.block_bytes > 0)
      copy_bytes(block_ptr(b), block_ptr(parent.block_table[full]), layout_.block_bytes);
    child.block_table.push_back(b);
  }
  child.num_computed_tokens = computed;
  child.block_hashes.assign(parent.block_hashes.begin(),
                            parent.block_hashes.begin() + std::min<int64_t>(full, parent.block_hashes.size()));
  child.num_registered_blocks = std::min(parent.num_registered_blocks, full);
  return true;
}

int64_t KvCacheManager::smallest_ring() const {
  int64_t smallest = 0;
  for (const CacheGroupSpec& g : layout_.groups)
    if (g.kind == CacheKind::kSlidingRing && (smallest == 0 || g.window < smallest)) smallest = g.window;
  return smallest;
}

SavedRings& SavedRings::operator=(SavedRings&& o) noexcept {
  if (this == &o) return *this;
  if (data_ && memory_) memory_->release(data_);
  memory_ = o.memory_;
  data_ = o.data_;
  capacity_ = o.capacity_;
  host_ = std::move(o.host_);
  bytes_ = o.bytes_;
  o.data_ = nullptr;
  o.capacity_ = o.bytes_ = 0;
  return *this;
}

SavedRings::~SavedRings() {
  if (data_ && memory_) memory_->release(data_);
}

Status KvCacheManager::copy_ring_runs(uint8_t* slot, uint8_t* saved, int64_t from, int64_t n, int64_t a, int64_t b,
                                      RingCopy dir) {
  int64_t off = 0;
  for (size_t g = 0; g < layout_.groups.size(); ++g) {
    const CacheGroupSpec& spec = layout_.groups[g];
    if (spec.kind != CacheKind::kSlidingRing || layout_.placement[g].in_block) continue;
    const int64_t eb = spec.entry_bytes, pitch = layout_.placement[g].entries_per_unit * eb;
    // [a, b) in at most two runs of consecutive ring entries (split where the ring wraps); each
    // run is one strided copy over the group's layers.
    for (int64_t p = a; p < b;) {
      const int64_t idx = p % spec.window, run = std::min(b - p, spec.window - idx);
      uint8_t* ring = slot + layout_.slot_entry_offset(static_cast<int32_t>(g), 0, idx);
      uint8_t* keep = saved + off + (p - from) * eb;
      uint8_t* dst = dir == RingCopy::kSave ? keep : ring;
      const uint8_t* src = dir == RingCopy::kSave ? ring : keep;
      const int64_t dst_pitch = dir == RingCopy::kSave ? n * eb : pitch, src_pitch = dir == RingCopy::kSave ? pitch : n * eb;
      if (config_.memory) {
        DI_RETURN_IF_ERROR(config_.memory->copy_rows(dst, dst_pitch, src, src_pitch, run * eb, spec.num_layers));
      } else {
        for (int32_t l = 0; l < spec.num_layers; ++l)
          std::memcpy(dst + l * dst_pitch, src + l * src_pitch, static_cast<size_t>(run * eb));
      }
      p += run;
    }
    off += spec.num_layers * n * eb;
  }
  return Status::ok();
}

Status KvCacheManager::save_ring_entries(Sequence& seq, int64_t from, int64_t to, SavedRings& saved) {
  saved.bytes_ = 0;
  if (seq.slot < 0 || to <= from) return Status::ok();
  const int64_t n = to - from;
  const int64_t ring = smallest_ring();
  if (ring > 0 && n > ring)
    return Status::internal("save_ring_entries: " + std::to_string(n) + " positions exceed the smallest ring (" +
                            std::to_string(ring) + ")");
  int64_t bytes = 0;
  for (size_t g = 0; g < layout_.groups.size(); ++g) {
    const CacheGroupSpec& spec = layout_.groups[g];
    if (spec.kind == CacheKind::kSlidingRing && !layout_.placement[g].in_block) bytes += spec.num_layers * n * spec.entry_bytes;
  }
  if (bytes == 0) return Status::ok();
  uint8_t* dst;
  if (config_.memory) {
    if (bytes > saved.capacity_) {
      if (saved.data_ && saved.memory_) saved.memory_->release(saved.data_);
      saved.data_ = nullptr;
      saved.capacity_ = 0;
      DI_ASSIGN_OR_RETURN(saved.data_, config_.memory->allocate_zeroed(bytes));
      saved.memory_ = config_.memory;
      saved.capacity_ = bytes;
    }
    dst = saved.data_;
  } else {
    saved.host_.resize(static_cast<size_t>(bytes));
    dst = saved.host_.data();
  }
  saved.bytes_ = bytes;
  return copy_ring_runs(slot_ptr(seq.slot), dst, from, n, from, to, RingCopy::kSave);
}

Status KvCacheManager::restore_ring_entries(Sequence& seq, int64_t from, int64_t to, int64_t keep_to,
                                            const SavedRings& saved) {
  if (seq.slot < 0 || saved.bytes_ == 0 || keep_to >= to) return Status::ok();
  uint8_t* src = config_.memory ? saved.data_ : const_cast<uint8_t*>(saved.host_.data());
  return copy_ring_runs(slot_ptr(seq.slot), src, from, to - from, std::max(from, keep_to), to, RingCopy::kRestore);
}

void KvCacheManager::trim(Sequence& seq) {
  const auto keep = static_cast<size_t>(layout_.blocks_needed(seq.num_computed_tokens + 1));
  while (seq.block_table.size() > keep) {
    pool_.unref(seq.block_table.back());
    seq.block_table.pop_back();
  }
}

PagedSequenceCache KvCacheManager::cache_view(Sequence& seq) {
  return PagedSequenceCache(&layout_, blocks_, seq.slot >= 0 ? slot_ptr(seq.slot) : nullptr,
                            &seq.block_table, config_.memory && config_.memory->on_device());
}

}  // namespace di::engine
