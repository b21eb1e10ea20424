// Emits the longest prefix of the pending bytes that ends on a character boundary. Cutting
// there is safe for lossy decoding: a held-back tail is a valid character prefix, and no
// ill-formed subpart can start before the cut and reach past it.
#include "recipe/tokenizer/stream_decoder.h"

#include "base/utf8.h"

namespace di::recipe {

StreamDecoder::StreamDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens)
    : tokenizer_(std::move(tokenizer)), skip_special_tokens_(skip_special_tokens) {}

Result<std::string> StreamDecoder::push(std::span<const int32_t> ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!tokenizer_->is_valid_id(ids[i])) {
      return Status::invalid_argument("ids[" + std::to_string(i) + "]: token id " +
                                      std::to_string(ids[i]) + " is not in the vocabulary");
    }
  }
  const auto& bytes = tokenizer_->all_token_bytes();
  for (int32_t id : ids) {
    if (skip_special_tokens_ && tokenizer_->is_special(id)) continue;
    pending_ += bytes[id];
  }
  const size_t cut = utf8_complete_prefix(pending_);
  std::string delta = utf8_lossy(std::string_view(pending_).substr(0, cut));
  pending_.erase(0, cut);
  return delta;
}

std::string StreamDecoder::finish() {
  std::string rest = utf8_lossy(pending_);
  pending_.clear();
  return rest;
}

}  // namespace di::recipe
