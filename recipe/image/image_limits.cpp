// ImageByteBudget: lock-free reservation so concurrent streams cannot overshoot the total.
#include "recipe/image/image_limits.h"

#include <string>

namespace di::recipe::image {

Status ImageByteBudget::reserve(size_t bytes, std::string_view field) {
  size_t available = remaining_.load(std::memory_order_relaxed);
  while (true) {
    if (available < bytes) {
      const size_t used = max_total_bytes_ - available;
      return Status::limit(std::string(field) + ": images total at least " +
                           std::to_string(used + bytes) + " bytes, the limit per request is " +
                           std::to_string(max_total_bytes_));
    }
    if (remaining_.compare_exchange_weak(available, available - bytes,
                                         std::memory_order_relaxed)) {
      return Status::ok();
    }
  }
}

}  // namespace di::recipe::image
