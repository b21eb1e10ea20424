// resolve_request_images: the remote-fetch switch, then image::resolve_image_refs under the
// recipe's limits and fetch options, with its Status turned into the protocol's error.
#include "recipe/prepare/prepare_images.h"

namespace di::recipe {

Result<image::ResolvedImages> resolve_request_images(const ImageOptions& options,
                                                     Protocol protocol,
                                                     const std::vector<ImageRef>& refs) {
  const std::string param = protocol == Protocol::kResponses ? "input" : "messages";
  if (!options.allow_remote) {
    for (size_t i = 0; i < refs.size(); ++i)
      if (refs[i].kind == ImageRef::Kind::kUrl)
        return ApiError::bad_request(protocol, param,
                                     "images[" + std::to_string(i) +
                                         "]: image URLs are not fetched by this server; send "
                                         "the image as a base64 data URL instead")
            .to_status();
  }
  const image::ImageResolver resolver(options.limits, options.fetch);
  image::ImageQuota quota;
  auto resolved = image::resolve_image_refs(resolver, refs, quota);
  if (resolved.is_ok()) return resolved;
  const Status& st = resolved.status();
  // kIo: DNS/connect/timeout/5xx — the client's request may succeed when retried.
  if (st.code() == StatusCode::kIo || st.code() == StatusCode::kCancelled ||
      st.code() == StatusCode::kInternal || st.code() == StatusCode::kOutOfMemory)
    return ApiError::internal(protocol, "image fetch failed: " + st.message()).to_status();
  return ApiError::bad_request(protocol, param, st.message()).to_status();
}

}  // namespace di::recipe
