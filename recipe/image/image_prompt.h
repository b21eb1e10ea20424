// The prompt-token cost of prepared images. The placeholder text itself (and the
// "[Unsupported Image]" text for models without vision) belongs to recipe/encoding.
#pragma once

#include <cstdint>
#include <span>

#include "recipe/image/image_preprocess.h"

namespace di::recipe::image {

// Prompt tokens beyond the one placeholder token per image: Σ (num_tokens − 1). A prompt's
// token count is its tokenized text's count plus this.
uint64_t image_token_adjustment(std::span<const PreparedImage> images);

}  // namespace di::recipe::image
