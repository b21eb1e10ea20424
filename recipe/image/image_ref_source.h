// The bridge from the request side: recipe::ImageRef (what the protocol parsers collect) →
// ImageSource, with the conversion-time checks. No fetching or decoding happens here.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "recipe/image/image_source.h"
#include "recipe/protocol/conversation.h"

namespace di::recipe::image {

// kUrl / kDataUrl → image_source_from_url, kBase64 → image_source_from_base64; `detail` ""
// means high. Errors start with `field` (kInvalidArgument, kUnsupported, kLimit).
Result<ImageSource> image_source_from_ref(const ImageRef& ref, std::string field);

// All of a request's references in placeholder order; fields are "images[<i>]".
Result<std::vector<ImageSource>> image_sources_from_refs(const std::vector<ImageRef>& refs);

}  // namespace di::recipe::image
