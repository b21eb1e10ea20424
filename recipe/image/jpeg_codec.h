// JPEG through libjpeg-turbo's TurboJPEG API, behind the same narrow seam as stb_codec: a header
// probe and a decode to 8-bit RGBA. libjpeg-turbo is the decoder browsers and Pillow use and is
// continuously fuzzed upstream; stb's JPEG decoder is not used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "recipe/image/media_type.h"

namespace di::recipe::image::jpeg {

// Size from the frame header. False (with *error set) when it cannot be read.
bool info(const uint8_t* data, size_t size, int* width, int* height, std::string* error);

// Decodes to RGBA (alpha 255) into *out. Recoverable corruption (a truncated scan) decodes with
// the missing part filled, as other decoders do; fatal errors return false with *error set.
bool decode_rgba(const uint8_t* data, size_t size, Bytes* out, int* width, int* height,
                 std::string* error);

}  // namespace di::recipe::image::jpeg
