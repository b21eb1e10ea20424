// ImageLimits, ImageQuota, ImageByteBudget: how many images and bytes one request may carry,
// and the accounting that enforces it while concurrent fetches stream. No I/O, no decoding.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace di::recipe::image {

struct ImageLimits {
  size_t max_images = 600;
  size_t max_url_len = 8192;                   // bytes of an external URL
  size_t max_image_bytes = size_t{32} << 20;   // one encoded image
  size_t max_total_bytes = size_t{64} << 20;   // all encoded images of one request
  size_t max_concurrent_sources = 8;           // 0 is treated as 1
  uint32_t max_dimension_px = 8192;            // longest accepted side...
  uint32_t max_dimension_on_many_images_px = 4096;  // ...once a request has this many:
  size_t many_images_threshold = 15;
  uint32_t low_detail_max_dimension_px = 512;  // long-side cap for detail=low

  // The side limit for a request carrying `image_count` images.
  uint32_t max_dimension(size_t image_count) const {
    return image_count < many_images_threshold ? max_dimension_px
                                               : max_dimension_on_many_images_px;
  }
};

// What the completed resolve calls of one request used. One quota per request, passed to
// every resolve call; a failed call leaves it unchanged.
class ImageQuota {
 public:
  size_t image_count() const { return images_; }
  size_t byte_size() const { return bytes_; }
  void add(size_t images, size_t bytes) {
    images_ += images;
    bytes_ += bytes;
  }

 private:
  size_t images_ = 0;
  size_t bytes_ = 0;
};

// The bytes still available to the fetches of one resolve call. A fetch reserves bytes as its
// body arrives, so concurrent fetches together never exceed the total. Thread-safe.
class ImageByteBudget {
 public:
  ImageByteBudget(size_t max_image_bytes, size_t max_total_bytes, size_t used_bytes)
      : remaining_(max_total_bytes > used_bytes ? max_total_bytes - used_bytes : 0),
        max_image_bytes_(max_image_bytes),
        max_total_bytes_(max_total_bytes) {}

  size_t max_image_bytes() const { return max_image_bytes_; }
  size_t max_total_bytes() const { return max_total_bytes_; }

  // Takes `bytes` from the budget, or fails (kLimit, message starting with `field`) and takes
  // nothing.
  Status reserve(size_t bytes, std::string_view field);
  // Gives back bytes a failed attempt had reserved.
  void release(size_t bytes) { remaining_.fetch_add(bytes, std::memory_order_relaxed); }

 private:
  std::atomic<size_t> remaining_;
  size_t max_image_bytes_;
  size_t max_total_bytes_;
};

}  // namespace di::recipe::image
