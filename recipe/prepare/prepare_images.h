// The image step of prepare() for a vision recipe: the operator's image options (remote fetch
// allowed or not, destinations, limits, timeouts), and the call that resolves one request's
// image references into model inputs and the prompt tokens they add. Protocol errors out.
#pragma once

#include <vector>

#include "recipe/image/image_fetcher.h"
#include "recipe/image/image_limits.h"
#include "recipe/image/image_ref_source.h"
#include "recipe/protocol/api_error.h"
#include "recipe/protocol/conversation.h"

namespace di::recipe {

struct ImageOptions {
  // false: http(s) image URLs are refused (400); data URLs and base64 blocks still work.
  bool allow_remote = true;
  image::ImageLimits limits;
  // Destination policy (default: internal addresses denied), timeouts, redirects.
  image::FetchOptions fetch;
};

// Checks, fetches, decodes and fits `refs` (placeholder order). Errors carry the protocol's
// ApiError: a fetch that failed on the network or the remote server's side (retryable) is a
// 500, everything else (policy, limits, bad or unsupported data) a 400 naming "images[i]".
Result<image::ResolvedImages> resolve_request_images(const ImageOptions& options,
                                                     Protocol protocol,
                                                     const std::vector<ImageRef>& refs);

}  // namespace di::recipe
