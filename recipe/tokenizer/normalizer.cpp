// Unicode normalization through utf8proc_map on (pointer, length) input, so NUL bytes in the
// text are characters like any other.
#include "recipe/tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>

namespace di::recipe {
namespace {

int options_of(NormalForm f) {
  switch (f) {
    case NormalForm::kNFC: return UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    case NormalForm::kNFD: return UTF8PROC_STABLE | UTF8PROC_DECOMPOSE;
    case NormalForm::kNFKC: return UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    case NormalForm::kNFKD: return UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  }
  return 0;
}

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

}  // namespace

Status Normalizer::apply(std::string_view text, std::string& out) const {
  out.assign(text);
  // ASCII is invariant under every normalization form.
  if (forms_.empty() || is_ascii(text)) return Status::ok();
  for (NormalForm f : forms_) {
    utf8proc_uint8_t* dst = nullptr;
    const utf8proc_ssize_t n =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(out.data()),
                     static_cast<utf8proc_ssize_t>(out.size()), &dst,
                     static_cast<utf8proc_option_t>(options_of(f)));
    if (n < 0) {
      return Status::invalid_argument(std::string("text: normalization failed: ") +
                                      utf8proc_errmsg(n));
    }
    out.assign(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
    std::free(dst);
  }
  return Status::ok();
}

}  // namespace di::recipe
