// fetch_image: downloads one external image with libcurl under a DestinationPolicy, timeouts and
// byte caps enforced while the body streams. Knows nothing of decoding or of the request's
// other images beyond the shared ImageByteBudget.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "recipe/image/destination_filter.h"
#include "recipe/image/image_limits.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {

// Polled while a transfer runs; returning true aborts it with kCancelled.
using CancelFn = std::function<bool()>;

struct FetchOptions {
  DestinationPolicy policy = DestinationPolicy::deny_internal();
  int64_t connect_timeout_ms = 5000;
  int64_t total_timeout_ms = 30000;  // the whole fetch, redirects included
  int max_redirects = 5;
  std::string user_agent = "deepinfer-image-fetch/1";
};

// GETs `url` (http or https only) and returns its body.
// - Every connection, including each redirect hop's, is checked against `options.policy` on
//   the address actually being connected to (after DNS resolution), so DNS rebinding and
//   redirects to internal hosts are refused before any byte is sent.
// - Redirects (301, 302, 303, 307, 308) are followed by hand, at most max_redirects, and each
//   target must again be http(s). No proxy from the environment is used (a proxy would hide
//   the destination from the check), and no content decoding is requested.
// - Body bytes are reserved from `budget` as they arrive; the fetch stops as soon as the image
//   exceeds budget.max_image_bytes() or the request's total.
// - `cancel` (optional) is polled during the transfer; true aborts it.
// Errors, each starting with `field`. kIo is the only retryable kind (a server-side 500 for
// the request); the rest are the client's fault (400):
//   kIo              DNS/connect/TLS failure, timeout, HTTP 5xx
//   kInvalidArgument malformed or non-http(s) URL (also as a redirect target), HTTP 4xx,
//                    too many redirects, empty body
//   kPermission      destination denied by the policy
//   kLimit           body over the per-image or per-request byte limit
//   kCancelled       `cancel` returned true
Result<Bytes> fetch_image(std::string_view url, const FetchOptions& options,
                          ImageByteBudget& budget, std::string_view field,
                          const CancelFn& cancel = {});

}  // namespace di::recipe::image
