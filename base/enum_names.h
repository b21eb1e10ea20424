// Names of an enum's values as the C ABI, the CLI and option files spell them. One table per enum
// gives both directions and the list a parse error shows, so the three cannot drift apart.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace di {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// The name of `value`; `fallback` for a value the table lacks (a cast out of range).
template <class E, size_t N>
constexpr std::string_view name_of(const EnumName<E> (&table)[N], E value,
                                   std::string_view fallback) {
  for (const EnumName<E>& e : table)
    if (e.value == value) return e.name;
  return fallback;
}

// The value named `name`, or nullopt.
template <class E, size_t N>
constexpr std::optional<E> value_named(const EnumName<E> (&table)[N], std::string_view name) {
  for (const EnumName<E>& e : table)
    if (e.name == name) return e.value;
  return std::nullopt;
}

// The table's names for an error message: "a", "b" or "c".
template <class E, size_t N>
std::string quoted_names(const EnumName<E> (&table)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += "\"" + std::string(table[i].name) + "\"";
  }
  return out;
}

// The value named `name`, or an invalid_argument "<what>: expected "a", "b" or "c", got "name"".
template <class E, size_t N>
Result<E> parse_enum(const EnumName<E> (&table)[N], std::string_view name, std::string_view what) {
  if (std::optional<E> v = value_named(table, name)) return *v;
  return Status::invalid_argument(std::string(what) + ": expected " + quoted_names(table) +
                                  ", got \"" + std::string(name) + "\"");
}

}  // namespace di
