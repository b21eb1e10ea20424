// ToyModel (test double): cache writes and reads, and the cache-free reference.
#include "tests/engine/toy_model.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace di::engine::testing {
namespace {

struct Entry {
  int32_t value;
  int32_t pos;
};

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Logits from what the model "attends to": the full history, the ring's last window, the
// compressed entries and the compressor state.
std::vector<float> logits_from(uint64_t h) {
  std::vector<float> row(kToyVocab);
  for (int64_t v = 0; v < kToyVocab; ++v)
    row[v] = static_cast<float>(mix(h ^ (static_cast<uint64_t>(v) << 32)) >> 40) / 16777216.0f * 8.0f;
  return row;
}

}  // namespace

ToyModel::ToyModel(int64_t max_position_embeddings, int delay_ms) : delay_ms_(delay_ms) {
  info_.family = "toy";
  info_.vocab_size = kToyVocab;
  info_.max_position_embeddings = max_position_embeddings;
  info_.eos_token_ids = {kToyEos};
  groups_ = {
      {"full", CacheKind::kFull, 2, sizeof(Entry), 0, 1, 0},
      {"ring", CacheKind::kSlidingRing, 1, sizeof(Entry), kToyWindow, 1, 0},
      {"comp", CacheKind::kCompressed, 1, sizeof(Entry), 0, kToyRate, 0},
      {"state", CacheKind::kStateSlot, 1, sizeof(Entry), 0, 1, 1},
  };
}

Status ToyModel::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  ++forwards_;
  if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
  logits.clear();
  for (const SequenceInput& in : batch.seqs) {
    SequenceCache& c = *in.cache;
    auto at = [&](int32_t g, int32_t layer, int64_t i) { return static_cast<Entry*>(c.entry(g, layer, i)); };
    for (int32_t k = 0; k < in.num_tokens; ++k) {
      const int64_t p = in.start_pos + k;
      const int32_t tok = in.tokens[k];
      for (int32_t layer = 0; layer < 2; ++layer) *at(0, layer, p) = {tok, static_cast<int32_t>(p)};
      *at(1, 0, p % kToyWindow) = {tok, static_cast<int32_t>(p)};
      Entry* st = at(3, 0, 0);
      const int32_t sum = (p % kToyRate == 0 ? 0 : st->value) * 31 + tok;
      *st = {sum, static_cast<int32_t>(p)};
      if (p % kToyRate == kToyRate - 1) *at(2, 0, p / kToyRate) = {sum, static_cast<int32_t>(p / kToyRate)};
      if (k + 1 < in.num_tokens && !in.all_logits) continue;
      // Read back everything; a wrong position anywhere poisons the hash.
      uint64_t h = 0x1234;
      for (int64_t q = 0; q <= p; ++q) {
        const Entry* e = at(0, 1, q);
        h = mix(h ^ static_cast<uint32_t>(e->value) ^ (static_cast<uint64_t>(e->pos != q) << 40));
      }
      for (int64_t q = std::max<int64_t>(0, p - kToyWindow + 1); q <= p; ++q) {
        const Entry* e = at(1, 0, q % kToyWindow);
        h = mix(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(e->value)) << 8) ^ (static_cast<uint64_t>(e->pos != q) << 41));
      }
      for (int64_t j = 0; j < (p + 1) / kToyRate; ++j) {
        const Entry* e = at(2, 0, j);
        h = mix(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(e->value)) << 16) ^ (static_cast<uint64_t>(e->pos != j) << 42));
      }
      h = mix(h ^ static_cast<uint32_t>(at(3, 0, 0)->value) ^ (static_cast<uint64_t>(at(3, 0, 0)->pos != p) << 43));
      std::vector<float> row = logits_from(h);
      logits.insert(logits.end(), row.begin(), row.end());
    }
  }
  return Status::ok();
}

std::vector<float> toy_reference_logits(const std::vector<int32_t>& tokens) {
  const int64_t p = static_cast<int64_t>(tokens.size()) - 1;
  uint64_t h = 0x1234;
  for (int64_t q = 0; q <= p; ++q) h = mix(h ^ static_cast<uint32_t>(tokens[q]));
  for (int64_t q = std::max<int64_t>(0, p - kToyWindow + 1); q <= p; ++q)
    h = mix(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(tokens[q])) << 8));
  int32_t sum = 0;
  std::vector<int32_t> comp;
  for (int64_t q = 0; q <= p; ++q) {
    sum = (q % kToyRate == 0 ? 0 : sum) * 31 + tokens[q];
    if (q % kToyRate == kToyRate - 1) comp.push_back(sum);
  }
  for (int32_t v : comp) h = mix(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(v)) << 16));
  h = mix(h ^ static_cast<uint32_t>(sum));
  return logits_from(h);
}

std::vector<int32_t> toy_reference_greedy(std::vector<int32_t> prompt, int max_tokens, bool ignore_eos) {
  std::vector<int32_t> out;
  for (int i = 0; i < max_tokens; ++i) {
    std::vector<float> row = toy_reference_logits(prompt);
    int32_t best = 0;
    for (int32_t v = 1; v < kToyVocab; ++v)
      if (row[v] > row[best]) best = v;
    out.push_back(best);
    prompt.push_back(best);
    if (best == kToyEos && !ignore_eos) break;
  }
  return out;
}

ToyTokenText::ToyTokenText() : text_(kToyVocab) {
  text_[0] = "<eos>";
  for (int32_t v = 1; v < kToyVocab; ++v) {
    switch (v % 7) {
      case 3: text_[v] = "\xC3"; break;           // first byte of 'é' (C3 A9)
      case 4: text_[v] = "\xA9"; break;           // its second byte
      case 5: text_[v] = "\xE4\xB8"; break;       // first two bytes of '中' (E4 B8 AD)
      case 6: text_[v] = "\xAD "; break;          // its last byte, then a space
      default: text_[v] = "w" + std::to_string(v) + " "; break;
    }
  }
}

std::string_view ToyTokenText::token_bytes(int32_t id) const {
  if (id < 0 || id >= kToyVocab) return {};
  return text_[id];
}

}  // namespace di::engine::testing
