// StreamDecoder: the ids' bytes through base/utf8.h's Utf8Stream.
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
  std::string delta;
  for (int32_t id : ids)
    if (!(skip_special_tokens_ && tokenizer_->is_special(id))) delta += text_.push(bytes[id]);
  return delta;
}

std::string StreamDecoder::finish() { return text_.finish(); }

}  // namespace di::recipe
