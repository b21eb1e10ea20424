// DataUrl: the parts of a `data:` URL (RFC 2397, as processed by the WHATWG Fetch standard)
// and the decoding of its body. Knows nothing of image formats beyond the declared type.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {

struct DataUrl {
  std::string media_type;  // the MIME type as written before ';base64' ("" when absent)
  bool base64 = false;     // the body is base64 (else percent-encoded bytes)
  std::string_view body;   // everything after the first ',' (a view into the parsed URL)
};

// Splits "data:[<mediatype>][;base64],<body>". The scheme is matched case-insensitively;
// errors (kInvalidArgument) name `field`. The result views into `url`.
Result<DataUrl> parse_data_url(std::string_view url, std::string_view field);

// The body's size once decoded, computed without decoding: exact for percent-encoding, and for
// base64 at most 2 bytes below the real size. For limits checked before decoding.
size_t estimated_decoded_size(const DataUrl& url);

// Percent-decodes the body, then base64-decodes it when the URL says ';base64'.
Result<Bytes> decode_data_url_body(const DataUrl& url, std::string_view field);

}  // namespace di::recipe::image
