// Tokenizer: a Hugging Face tokenizer.json byte-level BPE tokenizer (DeepSeek V3/V4, Llama-3,
// Qwen2/3) that matches the reference implementation id for id. Immutable after load and safe
// to share between threads. Owns the encode/decode pipeline; knows nothing of chat templates.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "recipe/tokenizer/added_vocabulary.h"
#include "recipe/tokenizer/bpe_model.h"
#include "recipe/tokenizer/normalizer.h"
#include "recipe/tokenizer/pre_tokenizer.h"

namespace di::recipe {

// One piece of a prompt: template text (special = true: added/special tokens are recognised)
// or content (special = false: everything is plain text, so "<｜User｜>" typed by a user is
// encoded as ordinary characters).
struct Segment {
  std::string_view text;
  bool special = false;
};

// Token ids [begin, end) of a segmented encode.
struct TokenRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const TokenRange&) const = default;
};

struct SegmentedIds {
  std::vector<int32_t> ids;
  // The ids that came from special (template) segments, as maximal half-open ranges (adjacent
  // template segments merge into one range; empty ones add nothing).
  std::vector<TokenRange> special_ranges;
};

struct EncodeOptions {
  // Recognise added tokens (special or not) in the text; false = all text is plain BPE.
  bool recognize_added_tokens = true;
  // Apply the post-processor (BOS/EOS per tokenizer.json's TemplateProcessing, or per
  // tokenizer_config.json's add_bos_token / add_eos_token for LlamaTokenizerFast).
  bool add_special_tokens = false;
};

class Tokenizer {
 public:
  // Loads `path`: a model directory (tokenizer.json and, when present, tokenizer_config.json)
  // or a tokenizer.json file (its directory's tokenizer_config.json is read when present).
  // Errors: kNotFound / kIo (files), kParse (malformed), kUnsupported (a component this
  // tokenizer does not implement; the message names it).
  static Result<std::shared_ptr<const Tokenizer>> load(const std::string& path);
  // The same from the files' contents; `config_json` may be empty.
  static Result<std::shared_ptr<const Tokenizer>> from_json(std::string_view tokenizer_json,
                                                            std::string_view config_json = {});

  // Encodes UTF-8 text (invalid UTF-8 is kInvalidArgument). No BOS/EOS is added.
  Result<std::vector<int32_t>> encode(std::string_view text, bool recognize_added_tokens) const;
  Result<std::vector<int32_t>> encode(std::string_view text, const EncodeOptions& options) const;
  // Appends to `out` (no post-processing); on error `out` may hold a partial result.
  Status encode_into(std::string_view text, bool recognize_added_tokens,
                     std::vector<int32_t>& out) const;
  // Encodes each segment on its own (special ones with added-token recognition) and reports
  // which ids came from special segments.
  Result<SegmentedIds> encode_segments(std::span<const Segment> segments) const;

  // Decodes ids to text (invalid UTF-8 from byte tokens becomes U+FFFD, as in Hugging Face).
  // An id outside the vocabulary is kInvalidArgument naming its index.
  Result<std::string> decode(std::span<const int32_t> ids, bool skip_special_tokens) const;

  // The raw bytes a token stands for (the ByteLevel spelling undone; an added token whose
  // content lies outside the byte alphabet is its own UTF-8). kInvalidArgument for bad ids.
  Result<std::string> token_bytes(int32_t id) const;
  // Raw bytes of every id 0..vocab_size()-1 ("" for ids no token uses; see is_valid_id).
  const std::vector<std::string>& all_token_bytes() const { return token_bytes_; }

  int64_t vocab_size() const { return static_cast<int64_t>(token_bytes_.size()); }
  bool is_valid_id(int32_t id) const { return id >= 0 && id < vocab_size() && (flags_[id] & kValid); }
  // Added tokens marked "special": true (what skip_special_tokens drops).
  bool is_special(int32_t id) const { return is_valid_id(id) && (flags_[id] & kSpecial); }
  bool is_added(int32_t id) const { return is_valid_id(id) && (flags_[id] & kAdded); }
  // The id of a token by its spelling: an added token's content or a vocab entry as written in
  // tokenizer.json (byte-level alphabet, e.g. "Ġthe").
  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The tokenizer.json spelling of an id (added token content or vocab entry).
  Result<std::string> id_to_token(int32_t id) const;
  const std::vector<AddedToken>& added_tokens() const { return added_.tokens(); }

  // From tokenizer_config.json (bos_token / eos_token as a string or {"content": ...}).
  std::optional<int32_t> bos_id() const { return bos_id_; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  // True when encode with add_special_tokens prepends the BOS id.
  bool add_bos_token() const { return add_bos_token_; }

 private:
  friend class TokenizerLoader;
  enum : uint8_t { kValid = 1, kSpecial = 2, kAdded = 4 };

  Tokenizer();
  Status encode_section(std::string_view text, bool recognize, std::vector<int32_t>& out) const;
  void encode_plain(std::string_view text, std::vector<int32_t>& out) const;

  uint64_t serial_;  // identifies this instance to the per-thread word cache
  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  BpeModel model_;
  AddedVocabulary added_;
  std::vector<std::string> token_bytes_;
  std::vector<uint8_t> flags_;
  std::vector<std::string> spellings_;  // id -> tokenizer.json spelling
  BytesToId spelling_to_id_;
  std::vector<int32_t> prefix_ids_, suffix_ids_;  // the post-processor's single template
  std::optional<int32_t> bos_id_, eos_id_;
  bool add_bos_token_ = false;
};

}  // namespace di::recipe
