// stb_image compiled here, restricted to png/jpeg/gif from memory, with internal linkage so it
// cannot clash with another copy of stb linked into the same program.
#include "recipe/image/stb_codec.h"

#include <climits>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_GIF
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_FAILURE_USERMSG
// A safety net under the configurable dimension limit, which is checked before decoding.
#define STBI_MAX_DIMENSIONS (1 << 15)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace di::recipe::image::stb {
namespace {

std::string reason() {
  const char* r = stbi_failure_reason();
  return r ? r : "unknown error";
}

}  // namespace

bool info(const uint8_t* data, size_t size, int* width, int* height, std::string* error) {
  if (size > static_cast<size_t>(INT_MAX)) {
    *error = "image too large to decode";
    return false;
  }
  int comp = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), width, height, &comp)) {
    *error = reason();
    return false;
  }
  return true;
}

uint8_t* decode_rgba(const uint8_t* data, size_t size, int* width, int* height,
                     std::string* error) {
  if (size > static_cast<size_t>(INT_MAX)) {
    *error = "image too large to decode";
    return nullptr;
  }
  int comp = 0;
  uint8_t* px = stbi_load_from_memory(data, static_cast<int>(size), width, height, &comp, 4);
  if (px == nullptr) *error = reason();
  return px;
}

void release(uint8_t* pixels) { stbi_image_free(pixels); }

}  // namespace di::recipe::image::stb
