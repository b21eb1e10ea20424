// libFuzzer target: parse_json_text (request bodies, tool-call arguments) against nlohmann's own
// parser as the reference: the same verdict and the same value whenever the nesting is within
// the bound, a refusal (never a crash) past it, a raw NUL refused; py_json_dumps of what it
// accepts.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "recipe/encoding/json_text.h"
#include "recipe/encoding/py_json.h"

using di::recipe::JsonTextResult;

namespace {

int depth_of(const nlohmann::ordered_json& v) {
  // The reference value came from nlohmann's parser on input under the fuzzer's max_len, so
  // this recursion is bounded by that length.
  int d = 0;
  if (v.is_array() || v.is_object())
    for (const auto& e : v) d = std::max(d, depth_of(e));
  return (v.is_array() || v.is_object()) ? d + 1 : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  constexpr int kDepth = 8;
  const JsonTextResult mine = di::recipe::parse_json_text(in, kDepth);
  const nlohmann::ordered_json ref = nlohmann::ordered_json::parse(in.begin(), in.end(), nullptr, false);
  // nlohmann stops at a raw NUL as if the input ended there; parse_json_text refuses it.
  if (in.find('\0') != std::string_view::npos) {
    if (mine.error != JsonTextResult::Error::kSyntax) std::abort();
    return 0;
  }
  if (ref.is_discarded()) {
    if (mine.error != JsonTextResult::Error::kSyntax && mine.error != JsonTextResult::Error::kTooDeep) std::abort();
    return 0;
  }
  if (depth_of(ref) > kDepth) {
    if (mine.error != JsonTextResult::Error::kTooDeep) std::abort();
    return 0;
  }
  if (mine.error != JsonTextResult::Error::kNone) std::abort();
  if (mine.value != ref || mine.value.dump() != ref.dump()) std::abort();
  (void)di::recipe::py_json_dumps(mine.value);
  return 0;
}
