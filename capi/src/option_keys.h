// The table of option keys di_options accepts: each key's type, scope and documentation.
// A key is added here when the code that reads it lands; an unknown key is DI_E_UNSUPPORTED.
#pragma once

#include <string_view>

namespace di::capi {

enum class OptionType { kInt64, kDouble, kString, kJson };

struct OptionKey {
  std::string_view key;
  OptionType type;
  std::string_view scope;  // "engine", "sampling", "recipe", "parser", ...
  std::string_view doc;
};

// Returns the key's entry, or nullptr when the library does not know `key`.
const OptionKey* find_option_key(std::string_view key);

// Every known key, as a JSON array (di_options_schema).
const char* option_schema_json();

std::string_view option_type_name(OptionType type);

}  // namespace di::capi
