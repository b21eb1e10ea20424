// The bridge from the request side: recipe::ImageRef (what the protocol parsers collect) →
// ImageSource with the conversion-time checks, and the one call that resolves a request's
// references into prepared images and their prompt-token adjustment.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "base/status.h"
#include "recipe/image/image_resolver.h"
#include "recipe/image/image_source.h"
#include "recipe/protocol/conversation.h"

namespace di::recipe::image {

// kUrl / kDataUrl → image_source_from_url, kBase64 → image_source_from_base64; `detail` ""
// means high. Errors start with `field` (kInvalidArgument, kUnsupported, kLimit).
Result<ImageSource> image_source_from_ref(const ImageRef& ref, std::string field);

// All of a request's references in placeholder order; fields are "images[<i>]".
Result<std::vector<ImageSource>> image_sources_from_refs(const std::vector<ImageRef>& refs);

struct ResolvedImages {
  std::vector<PreparedImage> images;  // placeholder order
  uint64_t token_adjustment = 0;      // Σ (num_tokens − 1): add to the tokenized prompt's length
};

// image_sources_from_refs + resolver.resolve + image_token_adjustment. Errors as theirs.
Result<ResolvedImages> resolve_image_refs(const ImageResolver& resolver,
                                          const std::vector<ImageRef>& refs, ImageQuota& quota,
                                          const std::atomic<bool>* cancel = nullptr);

}  // namespace di::recipe::image
