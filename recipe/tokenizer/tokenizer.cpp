// Encode (added tokens -> normalizer -> pre-tokenizer -> BPE, with a per-thread word cache) and
// decode (ids -> bytes -> lossy UTF-8). Loading lives in tokenizer_loader.cpp.
#include "recipe/tokenizer/tokenizer.h"

#include <atomic>

#include "base/utf8.h"
#include "recipe/tokenizer/word_cache.h"

namespace di::recipe {
namespace {

std::atomic<uint64_t> g_next_serial{1};

Status check_utf8(std::string_view text) {
  if (utf8_valid(text)) return Status::ok();
  return Status::invalid_argument("text: not valid UTF-8");
}

// `where` names the argument ("ids[3]: ") or is empty.
Status unknown_id(const std::string& where, int32_t id, int64_t vocab_size) {
  return Status::invalid_argument(where + "token id " + std::to_string(id) + " is not in the vocabulary (size " +
                                  std::to_string(vocab_size) + ")");
}

}  // namespace

Tokenizer::Tokenizer() : serial_(g_next_serial.fetch_add(1)) {}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                               bool recognize_added_tokens) const {
  std::vector<int32_t> ids;
  DI_RETURN_IF_ERROR(encode_into(text, recognize_added_tokens, ids));
  return ids;
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                               const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  if (options.add_special_tokens) ids = prefix_ids_;
  DI_RETURN_IF_ERROR(encode_into(text, options.recognize_added_tokens, ids));
  if (options.add_special_tokens) ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  return ids;
}

Status Tokenizer::encode_into(std::string_view text, bool recognize,
                              std::vector<int32_t>& out) const {
  DI_RETURN_IF_ERROR(check_utf8(text));
  if (!recognize || !added_.has_raw()) return encode_section(text, recognize, out);
  std::vector<AddedSplit> splits;
  added_.split(text, /*normalized=*/false, splits);
  for (const AddedSplit& s : splits) {
    if (s.token_id >= 0) out.push_back(s.token_id);
    else DI_RETURN_IF_ERROR(encode_section(text.substr(s.begin, s.end - s.begin), true, out));
  }
  return Status::ok();
}

Status Tokenizer::encode_section(std::string_view text, bool recognize,
                                 std::vector<int32_t>& out) const {
  std::string normalized;
  if (!normalizer_.is_identity()) {
    DI_RETURN_IF_ERROR(normalizer_.apply(text, normalized));
    text = normalized;
  }
  if (!recognize || !added_.has_normalized()) {
    encode_plain(text, out);
    return Status::ok();
  }
  std::vector<AddedSplit> splits;
  added_.split(text, /*normalized=*/true, splits);
  for (const AddedSplit& s : splits) {
    if (s.token_id >= 0) out.push_back(s.token_id);
    else encode_plain(text.substr(s.begin, s.end - s.begin), out);
  }
  return Status::ok();
}

void Tokenizer::encode_plain(std::string_view text, std::vector<int32_t>& out) const {
  WordCache& cache = WordCache::for_thread(serial_);
  std::string prefixed;
  pre_tokenizer_.split(text, [&](std::string_view piece) {
    if (pre_tokenizer_.add_prefix_space() && piece[0] != ' ') {
      prefixed.assign(1, ' ');
      prefixed.append(piece);
      piece = prefixed;
    }
    if (piece.size() == 1) {
      model_.encode_word(piece, out);
      return;
    }
    if (cache.lookup(piece, out)) return;
    const size_t before = out.size();
    model_.encode_word(piece, out);
    cache.insert(piece, out.data() + before, out.size() - before);
  });
}

Result<SegmentedIds> Tokenizer::encode_segments(std::span<const Segment> segments) const {
  SegmentedIds r;
  for (size_t i = 0; i < segments.size(); ++i) {
    const size_t begin = r.ids.size();
    Status st = encode_into(segments[i].text, segments[i].special, r.ids);
    if (!st.is_ok()) return std::move(st).with_context("segments[" + std::to_string(i) + "]");
    if (!segments[i].special || r.ids.size() == begin) continue;
    const auto b = static_cast<uint32_t>(begin), e = static_cast<uint32_t>(r.ids.size());
    if (!r.special_ranges.empty() && r.special_ranges.back().end == b) r.special_ranges.back().end = e;
    else r.special_ranges.push_back({b, e});
  }
  return r;
}

Result<std::string> Tokenizer::decode(std::span<const int32_t> ids,
                                      bool skip_special_tokens) const {
  std::string bytes;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (!is_valid_id(id)) return unknown_id("ids[" + std::to_string(i) + "]: ", id, vocab_size());
    if (skip_special_tokens && (flags_[id] & kSpecial)) continue;
    bytes += token_bytes_[id];
  }
  return utf8_lossy(bytes);
}

Result<std::string> Tokenizer::token_bytes(int32_t id) const {
  if (!is_valid_id(id)) return unknown_id("", id, vocab_size());
  return token_bytes_[id];
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  const int32_t id = spelling_to_id_.find(token);
  if (id < 0) return std::nullopt;
  return id;
}

Result<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (!is_valid_id(id)) return unknown_id("", id, vocab_size());
  return spellings_[id];
}

}  // namespace di::recipe
