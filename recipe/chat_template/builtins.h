// The filters, tests and methods chat templates call: the Jinja filters and tests they use
// (trim, tojson, length, items, join, select/reject, map, default, ...; defined, none, string,
// mapping, iterable, ...) and the Python str / dict methods (startswith, split, strip, items,
// get, ...). A name outside the set is an error naming it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "recipe/chat_template/value.h"

namespace di::recipe::chat_template {

struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // The argument at `index` or named `name`, or undefined.
  const Value& get(size_t index, const char* name) const;
};

Result<Value> apply_filter(const std::string& name, const Value& input, const Args& args);
Result<bool> apply_test(const std::string& name, const Value& input, const Args& args);
Result<Value> call_method(const Value& object, const std::string& name, const Args& args);

// Python's `in`: a substring, a list element, a mapping key.
Result<bool> contains(const Value& container, const Value& item);

}  // namespace di::recipe::chat_template
