// ImageResolver: a small pool of worker threads takes sources in order; each gets the encoded
// bytes (data URL decode, fetch, or the given bytes), reserving them from one shared byte budget,
// then preprocesses. Workers stop taking new sources after the first failure.
#include "recipe/image/image_resolver.h"

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

#include "recipe/image/data_url.h"

namespace di::recipe::image {
namespace {

Status reserve_in_memory(ImageByteBudget& budget, size_t bytes, const std::string& field) {
  if (bytes > budget.max_image_bytes()) {
    return Status::limit(field + ": image is " + std::to_string(bytes) + " bytes, the limit is " +
                         std::to_string(budget.max_image_bytes()));
  }
  return budget.reserve(bytes, field);
}

struct Encoded {
  Bytes data;
  const Bytes* view = nullptr;  // kBytes sources are used in place, not copied
  size_t reserved = 0;
};

Result<Encoded> encoded_bytes(const ImageSource& src, const ImageLimits& limits,
                              const FetchOptions& fetch, ImageByteBudget& budget,
                              const std::string& field, const CancelFn& stop) {
  Encoded out;
  switch (src.kind) {
    case ImageSource::Kind::kBytes:
      DI_RETURN_IF_ERROR(reserve_in_memory(budget, src.data.size(), field));
      out.view = &src.data;
      out.reserved = src.data.size();
      break;
    case ImageSource::Kind::kDataUrl: {
      DI_ASSIGN_OR_RETURN(DataUrl parsed, parse_data_url(src.url, field));
      if (!parse_media_type(parsed.media_type)) {
        return Status::unsupported(field + ": unsupported image media type '" +
                                   parsed.media_type + "'");
      }
      // The body is in the request already; refuse an oversized one before decoding it.
      const size_t estimate = estimated_decoded_size(parsed);
      if (estimate > budget.max_image_bytes()) {
        return Status::limit(field + ": image is at least " + std::to_string(estimate) +
                             " bytes, the limit is " + std::to_string(budget.max_image_bytes()));
      }
      DI_ASSIGN_OR_RETURN(out.data, decode_data_url_body(parsed, field));
      DI_RETURN_IF_ERROR(reserve_in_memory(budget, out.data.size(), field));
      out.reserved = out.data.size();
      break;
    }
    case ImageSource::Kind::kUrl:
      if (!is_http_url(src.url)) {
        return Status::invalid_argument(field + ": image URL must start with http");
      }
      if (src.url.size() > limits.max_url_len) {
        return Status::limit(field + ": image URL is " + std::to_string(src.url.size()) +
                             " bytes, the limit is " + std::to_string(limits.max_url_len));
      }
      DI_ASSIGN_OR_RETURN(out.data, fetch_image(src.url, fetch, budget, field, stop));
      out.reserved = out.data.size();
      break;
  }
  const Bytes& data = out.view ? *out.view : out.data;
  if (data.empty()) {
    budget.release(out.reserved);
    return Status::invalid_argument(field + ": empty image");
  }
  return out;
}

}  // namespace

std::string image_field(const ImageSource& source, size_t index) {
  return source.field.empty() ? "images[" + std::to_string(index) + "]" : source.field;
}

Result<std::vector<PreparedImage>> ImageResolver::resolve(std::span<const ImageSource> sources,
                                                          ImageQuota& quota,
                                                          const std::atomic<bool>* cancel) const {
  const size_t total_images = quota.image_count() + sources.size();
  if (total_images > limits_.max_images) {
    return Status::limit("images: the request has " + std::to_string(total_images) +
                         " images, the limit is " + std::to_string(limits_.max_images));
  }
  if (sources.empty()) return std::vector<PreparedImage>{};

  ImageByteBudget budget(limits_.max_image_bytes, limits_.max_total_bytes, quota.byte_size());
  PreprocessOptions pre;
  pre.max_dimension_px = limits_.max_dimension(total_images);
  pre.low_detail_max_dimension_px = limits_.low_detail_max_dimension_px;

  std::vector<Result<PreparedImage>> results(sources.size(), Status::cancelled("not started"));
  std::vector<size_t> reserved(sources.size(), 0);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  // Aborts running fetches both on the caller's cancel and on another source's failure.
  auto stopped = [&] {
    return stop.load(std::memory_order_relaxed) ||
           (cancel && cancel->load(std::memory_order_relaxed));
  };
  const CancelFn stopped_fn = stopped;
  auto work = [&] {
    while (!stopped()) {
      const size_t i = next.fetch_add(1);
      if (i >= sources.size()) return;
      const std::string field = image_field(sources[i], i);
      Result<Encoded> enc = encoded_bytes(sources[i], limits_, fetch_, budget, field, stopped_fn);
      if (!enc.is_ok()) {
        results[i] = std::move(enc).take_status();
        stop = true;
        return;
      }
      reserved[i] = enc->reserved;
      PreprocessOptions opts = pre;
      opts.detail = sources[i].detail;
      const Bytes& data = enc->view ? *enc->view : enc->data;
      results[i] = prepare_image(data, opts, field);
      if (!results[i].is_ok()) stop = true;
    }
  };
  const size_t workers = std::min(sources.size(), std::max<size_t>(1, limits_.max_concurrent_sources));
  {
    std::vector<std::jthread> pool;
    for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  }

  // The first failure in source order, ignoring sources that were only skipped or aborted
  // because of it.
  const Status* first_cancel = nullptr;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (results[i].is_ok()) continue;
    const Status& s = results[i].status();
    if (s.code() == StatusCode::kCancelled) {
      if (!first_cancel) first_cancel = &s;
      continue;
    }
    return s;
  }
  if (first_cancel) {
    return Status::cancelled("images: resolving cancelled");
  }
  size_t bytes = 0;
  for (size_t r : reserved) bytes += r;
  std::vector<PreparedImage> out;
  out.reserve(sources.size());
  for (auto& r : results) out.push_back(std::move(r).value());
  quota.add(sources.size(), bytes);
  return out;
}

}  // namespace di::recipe::image
