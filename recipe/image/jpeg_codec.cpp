// TurboJPEG calls. TJFLAG_LIMITSCANS caps progressive scans, which otherwise let a small file
// cost minutes of CPU.
#include "recipe/image/jpeg_codec.h"

#include <turbojpeg.h>

#include <memory>

namespace di::recipe::image::jpeg {
namespace {

struct HandleDeleter {
  void operator()(void* h) const { tjDestroy(h); }
};
using Handle = std::unique_ptr<void, HandleDeleter>;

// A decompressor that has read the header of `data`: the size in *width / *height. Null with
// *error set when the decoder cannot be made or the header does not parse.
Handle read_header(const uint8_t* data, size_t size, int* width, int* height, std::string* error) {
  Handle h(tjInitDecompress());
  if (!h) {
    *error = "cannot create a JPEG decoder";
    return nullptr;
  }
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(h.get(), data, static_cast<unsigned long>(size), width, height,
                          &subsamp, &colorspace) != 0) {
    *error = tjGetErrorStr2(h.get());
    return nullptr;
  }
  return h;
}

}  // namespace

bool info(const uint8_t* data, size_t size, int* width, int* height, std::string* error) {
  return read_header(data, size, width, height, error) != nullptr;
}

bool decode_rgba(const uint8_t* data, size_t size, Bytes* out, int* width, int* height,
                 std::string* error) {
  Handle h = read_header(data, size, width, height, error);
  if (!h) return false;
  if (*width <= 0 || *height <= 0) {
    *error = "empty JPEG frame";
    return false;
  }
  out->assign(size_t(*width) * size_t(*height) * 4, 0);
  if (tjDecompress2(h.get(), data, static_cast<unsigned long>(size), out->data(), *width, 0,
                    *height, TJPF_RGBA, TJFLAG_LIMITSCANS) != 0 &&
      tjGetErrorCode(h.get()) != TJERR_WARNING) {
    *error = tjGetErrorStr2(h.get());
    return false;
  }
  return true;
}

}  // namespace di::recipe::image::jpeg
