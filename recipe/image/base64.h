// Base64 decoding for image payloads (data URLs, Anthropic base64 blocks). Follows the WHATWG
// "forgiving-base64 decode": ASCII whitespace is skipped and missing padding is tolerated, so
// clients that strip '=' or wrap lines still work; anything else malformed is an error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {

// Decodes standard-alphabet base64 (RFC 4648 §4). Errors (kInvalidArgument) name `field` and
// the offset of the first bad character.
Result<Bytes> decode_base64(std::string_view text, std::string_view field);

// Checks that `text` would decode, without decoding it: "" when it would, else what is wrong
// ("invalid base64 at offset N", "invalid base64 padding", "truncated base64 (...)"). Lets a
// request parser reject a bad block before any image is fetched or decoded.
std::string base64_problem(std::string_view text);

// An upper bound on the decoded size of `text`, computed without decoding (for size limits).
size_t base64_decoded_size_bound(std::string_view text);

}  // namespace di::recipe::image
