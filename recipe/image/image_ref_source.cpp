// ImageRef → ImageSource.
#include "recipe/image/image_ref_source.h"

#include "recipe/image/image_prompt.h"

namespace di::recipe::image {

Result<ImageSource> image_source_from_ref(const ImageRef& ref, std::string field) {
  ImageDetail detail = ImageDetail::kHigh;
  if (!ref.detail.empty()) {
    const auto parsed = parse_image_detail(ref.detail);
    if (!parsed) {
      return Status::invalid_argument(field + ".detail: expected low, high, original or auto, got '" +
                                      ref.detail + "'");
    }
    detail = *parsed;
  }
  switch (ref.kind) {
    case ImageRef::Kind::kUrl:
    case ImageRef::Kind::kDataUrl:
      return image_source_from_url(ref.url, detail, std::move(field));
    case ImageRef::Kind::kBase64:
      return image_source_from_base64(ref.media_type, ref.data, detail, std::move(field));
  }
  return Status::internal(field + ": unknown image reference kind");
}

Result<std::vector<ImageSource>> image_sources_from_refs(const std::vector<ImageRef>& refs) {
  std::vector<ImageSource> out;
  out.reserve(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    DI_ASSIGN_OR_RETURN(ImageSource src,
                        image_source_from_ref(refs[i], "images[" + std::to_string(i) + "]"));
    out.push_back(std::move(src));
  }
  return out;
}

Result<ResolvedImages> resolve_image_refs(const ImageResolver& resolver,
                                          const std::vector<ImageRef>& refs, ImageQuota& quota,
                                          const std::atomic<bool>* cancel) {
  DI_ASSIGN_OR_RETURN(std::vector<ImageSource> sources, image_sources_from_refs(refs));
  ResolvedImages out;
  DI_ASSIGN_OR_RETURN(out.images, resolver.resolve(sources, quota, cancel));
  out.token_adjustment = image_token_adjustment(out.images);
  return out;
}

}  // namespace di::recipe::image
