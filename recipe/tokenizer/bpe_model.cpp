// BPE build (vocab and merges -> byte-keyed tables) and the merge loop: always apply the
// lowest-ranked adjacent pair, leftmost first, as Hugging Face's word.rs does with its heap.
#include "recipe/tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "recipe/tokenizer/byte_level.h"
#include "recipe/tokenizer/unicode_class.h"

namespace di::recipe {

Result<BpeModel> BpeModel::build(const std::vector<std::pair<std::string, int32_t>>& vocab,
                                 const std::vector<std::pair<std::string, std::string>>& merges,
                                 const BpeConfig& config) {
  BpeModel m;
  m.config_ = config;
  std::unordered_map<std::string_view, int32_t> by_spelling;
  by_spelling.reserve(vocab.size() * 2);
  m.by_bytes_.reserve(vocab.size());
  for (const auto& [spelling, id] : vocab) {
    by_spelling.emplace(spelling, id);
    // Tokens spelled outside the byte alphabet (e.g. "<｜begin▁of▁sentence｜>" in DeepSeek's
    // vocab) can never come out of merging bytes; they are reachable as added tokens only.
    if (auto bytes = byte_level_decode(spelling)) {
      m.by_bytes_.insert(*bytes, id);
      if (bytes->size() == 1) m.byte_ids_[static_cast<uint8_t>((*bytes)[0])] = id;
    }
  }
  if (config.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      auto it = by_spelling.find(name);
      if (it != by_spelling.end()) m.byte_fallback_ids_[b] = it->second;
    }
  }
  m.merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto& [l, r] = merges[i];
    auto li = by_spelling.find(l), ri = by_spelling.find(r);
    const std::string joined = l + r;
    auto ji = by_spelling.find(joined);
    if (li == by_spelling.end() || ri == by_spelling.end() || ji == by_spelling.end()) {
      const std::string& missing =
          li == by_spelling.end() ? l : ri == by_spelling.end() ? r : joined;
      return Status::parse("model.merges[" + std::to_string(i) + "]: token \"" + missing +
                           "\" is not in model.vocab");
    }
    m.merges_.insert(li->second, ri->second,
                     PairMerges::Merge{static_cast<uint32_t>(i), ji->second});
  }
  return m;
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.size() == 1 && byte_ids_[static_cast<uint8_t>(word[0])] >= 0) {
    out.push_back(byte_ids_[static_cast<uint8_t>(word[0])]);
    return;
  }
  if (config_.ignore_merges) {
    const int32_t id = by_bytes_.find(word);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  merge_symbols(word, out);
}

namespace {

struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  int32_t len;  // bytes covered; 0 once merged into its left neighbour
};

struct Candidate {
  uint32_t rank;
  int32_t pos;
  int32_t new_id;
  // std heap is a max-heap: "greater" puts the lowest rank, then the leftmost, on top.
  bool operator<(const Candidate& o) const {
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

struct Scratch {
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};

}  // namespace

void BpeModel::merge_symbols(std::string_view word, std::vector<int32_t>& out) const {
  thread_local Scratch scratch;
  std::vector<Symbol>& sym = scratch.symbols;
  std::vector<Candidate>& heap = scratch.heap;
  sym.clear();
  heap.clear();

  for (size_t i = 0; i < word.size(); ++i) {
    const uint8_t b = static_cast<uint8_t>(word[i]);
    int32_t id = byte_ids_[b];
    if (id < 0 && config_.byte_fallback) id = byte_fallback_ids_[b];
    if (id < 0) {
      if (config_.unk_id < 0) continue;  // no unk token: the byte is dropped, as in HF
      if (config_.fuse_unk && !sym.empty() && sym.back().id == config_.unk_id) {
        sym.back().len += 1;
        continue;
      }
      id = config_.unk_id;
    }
    const int32_t n = static_cast<int32_t>(sym.size());
    sym.push_back(Symbol{id, n - 1, -1, 1});
    if (n > 0) sym[n - 1].next = n;
  }
  if (sym.empty()) return;

  auto push_pair = [&](int32_t pos) {
    const Symbol& a = sym[pos];
    if (a.next < 0) return;
    if (const PairMerges::Merge* m = merges_.find(a.id, sym[a.next].id)) {
      heap.push_back(Candidate{m->rank, pos, m->id});
      std::push_heap(heap.begin(), heap.end());
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(sym.size()); ++i) {
    if (const PairMerges::Merge* m = merges_.find(sym[i].id, sym[i + 1].id))
      heap.push_back(Candidate{m->rank, i, m->id});
  }
  std::make_heap(heap.begin(), heap.end());

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& a = sym[top.pos];
    if (a.len == 0 || a.next < 0) continue;
    const int32_t right = a.next;
    const PairMerges::Merge* m = merges_.find(a.id, sym[right].id);
    if (!m || m->id != top.new_id || m->rank != top.rank) continue;  // stale entry
    a.id = top.new_id;
    a.len += sym[right].len;
    a.next = sym[right].next;
    sym[right].len = 0;
    if (a.next >= 0) sym[a.next].prev = top.pos;
    if (a.prev >= 0) push_pair(a.prev);
    push_pair(top.pos);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) out.push_back(sym[i].id);
}

}  // namespace di::recipe
