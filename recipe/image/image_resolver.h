// ImageResolver: turns a request's ImageSources into PreparedImages in placeholder order,
// enforcing the per-request limits, fetching external URLs (at most max_concurrent_sources at a
// time) and preprocessing. Owns no state between calls; the per-request ImageQuota is the
// caller's.
#pragma once

#include <atomic>
#include <span>
#include <vector>

#include "base/status.h"
#include "recipe/image/image_fetcher.h"
#include "recipe/image/image_limits.h"
#include "recipe/image/image_preprocess.h"
#include "recipe/image/image_source.h"

namespace di::recipe::image {

class ImageResolver {
 public:
  explicit ImageResolver(ImageLimits limits = {}, FetchOptions fetch = {})
      : limits_(limits), fetch_(std::move(fetch)) {}

  const ImageLimits& limits() const { return limits_; }
  const FetchOptions& fetch_options() const { return fetch_; }

  // Resolves `sources` (all images of one request, or the next batch of them) into prepared
  // images, same order. The count and byte limits include what `quota` already holds; on
  // success the call's images and bytes are added to it, on failure it is left unchanged.
  // When several sources fail, the error of the first failing source (in order) is returned;
  // once one fails, sources not yet started are skipped and running fetches are aborted.
  // Thread-safe (const); `cancel` (optional) aborts the call with kCancelled.
  Result<std::vector<PreparedImage>> resolve(std::span<const ImageSource> sources,
                                             ImageQuota& quota,
                                             const std::atomic<bool>* cancel = nullptr) const;

 private:
  ImageLimits limits_;
  FetchOptions fetch_;
};

// The field name errors use for source `index`: its own `field`, else "images[<index>]".
std::string image_field(const ImageSource& source, size_t index);

}  // namespace di::recipe::image
