// What images contribute to a prompt: the placeholder text, the text a model without vision
// sees instead, and the token adjustment for prepared images. No rendering of messages here;
// the encoders own that.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "recipe/image/image_preprocess.h"

namespace di::recipe::image {

// One per image in the V4.1 prompt text, in the order of the resolved images.
inline constexpr std::string_view kImagePlaceholder = "<｜image｜>";
// What a model without vision sees in place of each image (no fetch, no decode happens).
inline constexpr std::string_view kUnsupportedImage = "[Unsupported Image]";

// The text to put where an image was: the placeholder for a vision model, else
// kUnsupportedImage.
constexpr std::string_view image_prompt_text(bool model_has_vision) {
  return model_has_vision ? kImagePlaceholder : kUnsupportedImage;
}

// Prompt tokens beyond the one placeholder token per image: Σ (num_tokens − 1). The prompt's
// token count is the tokenized text's count plus this.
uint64_t image_token_adjustment(std::span<const PreparedImage> images);

}  // namespace di::recipe::image
