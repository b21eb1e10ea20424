// ImageSource construction: the conversion-time checks on image references.
#include "recipe/image/image_source.h"

#include "recipe/image/base64.h"
#include "recipe/image/data_url.h"

namespace di::recipe::image {

std::optional<ImageDetail> parse_image_detail(std::string_view text) {
  if (text == "low") return ImageDetail::kLow;
  if (text == "high") return ImageDetail::kHigh;
  if (text == "original") return ImageDetail::kOriginal;
  if (text == "auto") return ImageDetail::kAuto;
  return {};
}

bool is_http_url(std::string_view url) {
  if (url.size() < 4) return false;
  const char* want = "http";
  for (size_t i = 0; i < 4; ++i) {
    char c = url[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != want[i]) return false;
  }
  return true;
}

Result<ImageSource> image_source_from_url(std::string_view url, ImageDetail detail,
                                          std::string field) {
  ImageSource src;
  src.detail = detail;
  if (is_http_url(url)) {
    if (url.size() > kMaxImageUrlLen) {
      return Status::limit(field + ": image URL is " + std::to_string(url.size()) +
                           " bytes, the limit is " + std::to_string(kMaxImageUrlLen));
    }
    src.kind = ImageSource::Kind::kUrl;
    src.url = std::string(url);
    src.field = std::move(field);
    return src;
  }
  if (url.find("base64,") == std::string_view::npos) {
    return Status::invalid_argument(
        field + ": expected an http(s) URL or a base64 data URL (data:image/...;base64,...)");
  }
  DI_ASSIGN_OR_RETURN(DataUrl parsed, parse_data_url(url, field));
  if (!parsed.base64) {
    return Status::invalid_argument(field + ": data URL must be base64-encoded");
  }
  if (!parse_media_type(parsed.media_type)) {
    return Status::unsupported(field + ": unsupported image media type '" + parsed.media_type +
                               "' (expected image/jpeg, image/png, image/gif or image/webp)");
  }
  src.kind = ImageSource::Kind::kDataUrl;
  src.url = std::string(url);
  src.field = std::move(field);
  return src;
}

Result<ImageSource> image_source_from_base64(std::string_view media_type, std::string_view data,
                                             ImageDetail detail, std::string field) {
  if (!parse_media_type(media_type)) {
    return Status::unsupported(field + ".media_type: unsupported image media type '" +
                               std::string(media_type) +
                               "' (expected image/jpeg, image/png, image/gif or image/webp)");
  }
  DI_ASSIGN_OR_RETURN(Bytes bytes, decode_base64(data, field + ".data"));
  if (bytes.empty()) return Status::invalid_argument(field + ".data: empty image");
  return image_source_from_bytes(std::move(bytes), detail, std::move(field));
}

ImageSource image_source_from_bytes(Bytes data, ImageDetail detail, std::string field) {
  ImageSource src;
  src.kind = ImageSource::Kind::kBytes;
  src.data = std::move(data);
  src.detail = detail;
  src.field = std::move(field);
  return src;
}

}  // namespace di::recipe::image
