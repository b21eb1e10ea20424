// decode_image: stb_image for png/gif, libjpeg-turbo for jpeg, libwebp for webp; all decode to
// RGBA, and the alpha is flattened here so every later step sees plain RGB.
#include "recipe/image/image_decoder.h"

#include <webp/decode.h>

#include <memory>
#include <string>

#include "recipe/image/jpeg_codec.h"
#include "recipe/image/stb_codec.h"

namespace di::recipe::image {
namespace {

std::string size_text(uint64_t w, uint64_t h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

Status check_size(uint64_t w, uint64_t h, uint32_t max_dimension, std::string_view field) {
  if (w == 0 || h == 0) {
    return Status::invalid_argument(std::string(field) + ": image has no pixels (" +
                                    size_text(w, h) + ")");
  }
  if (w > max_dimension || h > max_dimension) {
    return Status::limit(std::string(field) + ": image is " + size_text(w, h) +
                         " px, the limit is " + std::to_string(max_dimension) + " px per side");
  }
  return Status::ok();
}

// out = (src * a + bg * (255 - a)) / 255, rounded to nearest.
void flatten_rgba(const uint8_t* rgba, size_t pixels, uint8_t* rgb) {
  for (size_t i = 0; i < pixels; ++i) {
    const uint32_t a = rgba[4 * i + 3];
    for (int c = 0; c < 3; ++c) {
      rgb[3 * i + c] = static_cast<uint8_t>(
          (rgba[4 * i + c] * a + uint32_t{kInferenceBackground} * (255 - a) + 127) / 255);
    }
  }
}

}  // namespace

Result<ImageHeader> read_image_header(std::span<const uint8_t> data, std::string_view field) {
  if (data.empty()) return Status::invalid_argument(std::string(field) + ": empty image");
  const auto type = sniff_media_type(data);
  if (!type) {
    return Status::unsupported(std::string(field) + ": " + std::string(kUnsupportedImageMessage));
  }
  ImageHeader h;
  h.media_type = *type;
  if (*type == MediaType::kWebp) {
    WebPBitstreamFeatures f;
    if (WebPGetFeatures(data.data(), data.size(), &f) != VP8_STATUS_OK) {
      return Status::invalid_argument(std::string(field) + ": cannot read the WebP header");
    }
    h.width = static_cast<uint32_t>(f.width);
    h.height = static_cast<uint32_t>(f.height);
    return h;
  }
  int w = 0, hh = 0;
  std::string error;
  const bool ok = *type == MediaType::kJpeg
                      ? jpeg::info(data.data(), data.size(), &w, &hh, &error)
                      : stb::info(data.data(), data.size(), &w, &hh, &error);
  if (!ok) {
    return Status::invalid_argument(std::string(field) + ": cannot read the " +
                                    std::string(mime_of(*type)) + " header: " + error);
  }
  h.width = static_cast<uint32_t>(w);
  h.height = static_cast<uint32_t>(hh);
  return h;
}

Result<DecodedImage> decode_image(std::span<const uint8_t> data, uint32_t max_dimension,
                                  std::string_view field) {
  DI_ASSIGN_OR_RETURN(ImageHeader header, read_image_header(data, field));
  DI_RETURN_IF_ERROR(check_size(header.width, header.height, max_dimension, field));

  DecodedImage out;
  out.media_type = header.media_type;
  const std::string what = std::string(mime_of(header.media_type));
  int w = 0, h = 0;
  if (header.media_type == MediaType::kWebp) {
    WebPBitstreamFeatures f;
    if (WebPGetFeatures(data.data(), data.size(), &f) != VP8_STATUS_OK) {
      return Status::invalid_argument(std::string(field) + ": cannot read the WebP header");
    }
    if (f.has_animation) {
      return Status::unsupported(std::string(field) + ": animated WebP is not supported");
    }
    std::unique_ptr<uint8_t, void (*)(void*)> px(
        WebPDecodeRGBA(data.data(), data.size(), &w, &h), WebPFree);
    if (!px) return Status::invalid_argument(std::string(field) + ": corrupt WebP image");
    DI_RETURN_IF_ERROR(check_size(w, h, max_dimension, field));
    out.pixels.resize(size_t(w) * size_t(h) * 3);
    flatten_rgba(px.get(), size_t(w) * size_t(h), out.pixels.data());
  } else if (header.media_type == MediaType::kJpeg) {
    std::string error;
    Bytes rgba;
    if (!jpeg::decode_rgba(data.data(), data.size(), &rgba, &w, &h, &error)) {
      return Status::invalid_argument(std::string(field) + ": corrupt image/jpeg image: " + error);
    }
    DI_RETURN_IF_ERROR(check_size(w, h, max_dimension, field));
    out.pixels.resize(size_t(w) * size_t(h) * 3);
    flatten_rgba(rgba.data(), size_t(w) * size_t(h), out.pixels.data());
  } else {
    std::string error;
    std::unique_ptr<uint8_t, void (*)(uint8_t*)> px(
        stb::decode_rgba(data.data(), data.size(), uint64_t{header.width} * header.height, &w,
                         &h, &error),
        stb::release);
    if (!px) {
      return Status::invalid_argument(std::string(field) + ": corrupt " + what + " image: " +
                                      error);
    }
    DI_RETURN_IF_ERROR(check_size(w, h, max_dimension, field));
    out.pixels.resize(size_t(w) * size_t(h) * 3);
    flatten_rgba(px.get(), size_t(w) * size_t(h), out.pixels.data());
  }
  out.width = static_cast<uint32_t>(w);
  out.height = static_cast<uint32_t>(h);
  return out;
}

}  // namespace di::recipe::image
