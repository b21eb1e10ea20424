// image_token_adjustment: each placeholder expands to the image's token grid at inference.
#include "recipe/image/image_prompt.h"

namespace di::recipe::image {

uint64_t image_token_adjustment(std::span<const PreparedImage> images) {
  uint64_t total = 0;
  for (const PreparedImage& img : images) total += img.num_tokens > 0 ? img.num_tokens - 1 : 0;
  return total;
}

}  // namespace di::recipe::image
