// stb_image compiled here, restricted to png/gif from memory, with internal linkage so it
// cannot clash with another copy of stb linked into the same program.
#include "recipe/image/stb_codec.h"

#include <climits>
#include <cstdlib>

namespace {
// stb sizes some buffers from lengths the file declares (a PNG IDAT chunk of 2 GiB in a 200-byte
// file) before it finds the data missing. Every stb allocation is held under a cap derived from
// the header's dimensions and the input size, so a tiny file cannot ask for gigabytes.
thread_local size_t g_alloc_cap = 0;
void* capped_malloc(size_t n) { return n > g_alloc_cap ? nullptr : std::malloc(n); }
void* capped_realloc(void* p, size_t n) { return n > g_alloc_cap ? nullptr : std::realloc(p, n); }
}  // namespace

#define STBI_MALLOC(sz) capped_malloc(sz)
#define STBI_REALLOC(p, newsz) capped_realloc(p, newsz)
#define STBI_FREE(p) std::free(p)

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
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

// Header parsing needs nothing near the input's size.
size_t header_cap(size_t size) { return 2 * size + (size_t{1} << 20); }

}  // namespace

bool info(const uint8_t* data, size_t size, int* width, int* height, std::string* error) {
  g_alloc_cap = header_cap(size);
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

uint8_t* decode_rgba(const uint8_t* data, size_t size, uint64_t max_pixels, int* width,
                     int* height, std::string* error) {
  // Room for the decoded pixels at 16 bits x 4 channels twice over (the 16→8-bit and channel
  // conversions copy), progressive-JPEG coefficients and compressed data held whole.
  g_alloc_cap = header_cap(size) + static_cast<size_t>(max_pixels) * 16;
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
