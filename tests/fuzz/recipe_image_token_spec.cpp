// libFuzzer target: the V4.1 token fit over arbitrary sizes, and the destination-rule parser.
// Invariants: every accepted size fits within 1024 tokens on the 14 px grid and is a fixed
// point; rule parsing never crashes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "recipe/image/destination_filter.h"
#include "recipe/image/token_spec.h"

using namespace di::recipe::image;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 8) {
    uint32_t w = 0, h = 0;
    std::memcpy(&w, data, 4);
    std::memcpy(&h, data + 4, 4);
    const ImageTokenSpec spec = ImageTokenSpec::v41();
    auto r = spec.calc_resize(w % (1u << 25), h % (1u << 25));
    if (r.is_ok()) {
      if (r->num_tokens > 1024 || r->best_width % 14 || r->best_height % 14) __builtin_trap();
      if (!spec.is_image_valid(r->best_width, r->best_height)) __builtin_trap();
    }
  }
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rule = parse_destination_rule(text);
  if (rule.is_ok()) {
    (void)DestinationPolicy::deny_internal().allow(*rule).check(rule->cidr.base, rule->port);
  }
  if (auto ip = IpAddress::parse(text)) (void)classify_address(*ip);
  return 0;
}
