// Base64 decoding for image payloads (data URLs, Anthropic base64 blocks). Follows the WHATWG
// "forgiving-base64 decode": ASCII whitespace is skipped and missing padding is tolerated, so
// clients that strip '=' or wrap lines still work; anything else malformed is an error.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/status.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {

// Decodes standard-alphabet base64 (RFC 4648 §4). Errors (kInvalidArgument) name `field` and
// the offset of the first bad character.
Result<Bytes> decode_base64(std::string_view text, std::string_view field);

// An upper bound on the decoded size of `text`, computed without decoding (for size limits).
size_t base64_decoded_size_bound(std::string_view text);

}  // namespace di::recipe::image
