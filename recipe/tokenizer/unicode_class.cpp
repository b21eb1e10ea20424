// Builds the per-code-point class table from libutf8proc's general categories. White_Space is
// not a category, so its 25 members are listed here (Unicode PropList.txt, stable since 6.3).
#include "recipe/tokenizer/unicode_class.h"

#include <utf8proc.h>

#include <memory>

namespace di::recipe {
namespace {

constexpr uint32_t kNumCodePoints = 0x110000;

uint8_t class_of_category(utf8proc_category_t cat) {
  switch (cat) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return kClassLetter;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      return kClassMark;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return kClassNumber;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return kClassPunct;
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      return kClassSymbol;
    default:
      return 0;
  }
}

std::unique_ptr<uint8_t[]> build_table() {
  auto t = std::make_unique<uint8_t[]>(kNumCodePoints);
  for (uint32_t cp = 0; cp < kNumCodePoints; ++cp) {
    t[cp] = (cp >= 0xD800 && cp <= 0xDFFF)
                ? 0
                : class_of_category(utf8proc_category(static_cast<utf8proc_int32_t>(cp)));
  }
  static constexpr uint32_t kWhiteSpace[][2] = {
      {0x0009, 0x000D}, {0x0020, 0x0020}, {0x0085, 0x0085}, {0x00A0, 0x00A0},
      {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F},
      {0x205F, 0x205F}, {0x3000, 0x3000}};
  for (const auto& r : kWhiteSpace)
    for (uint32_t cp = r[0]; cp <= r[1]; ++cp) t[cp] |= kClassWhitespace;
  return t;
}

}  // namespace

const uint8_t* char_class_table() {
  static const std::unique_ptr<uint8_t[]> table = build_table();
  return table.get();
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace di::recipe
