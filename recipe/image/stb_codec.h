// The two stb_image entry points the decoder needs (png, gif; JPEG goes to jpeg_codec), behind a narrow seam so
// that stb's implementation and its static symbols stay inside stb_codec.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace di::recipe::image::stb {

// Header-only size probe. False (with *error set) when the header cannot be read.
bool info(const uint8_t* data, size_t size, int* width, int* height, std::string* error);

// Decodes the first frame as 8-bit RGBA; the returned buffer is freed with release().
// `max_pixels` (the header's width * height, already checked against the limits) bounds every
// allocation stb makes. nullptr (with *error set) on failure.
uint8_t* decode_rgba(const uint8_t* data, size_t size, uint64_t max_pixels, int* width,
                     int* height, std::string* error);
void release(uint8_t* pixels);

}  // namespace di::recipe::image::stb
