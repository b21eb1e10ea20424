// A SAX handler that builds ordered_json with a key index per open object and refuses nesting
// deeper than the limit before descending (no recursion anywhere: the frames are a vector).
#include "recipe/encoding/json_text.h"

#include <unordered_map>
#include <utility>
#include <vector>

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

class BoundedBuilder {
 public:
  explicit BoundedBuilder(int max_depth) : max_depth_(max_depth) {}

  bool null() { return add(ordered_json(nullptr)); }
  bool boolean(bool v) { return add(ordered_json(v)); }
  bool number_integer(ordered_json::number_integer_t v) { return add(ordered_json(v)); }
  bool number_unsigned(ordered_json::number_unsigned_t v) { return add(ordered_json(v)); }
  bool number_float(ordered_json::number_float_t v, const std::string&) { return add(ordered_json(v)); }
  bool string(std::string& v) { return add(ordered_json(std::move(v))); }
  bool binary(ordered_json::binary_t&) { return false; }  // never produced by text input
  bool start_object(std::size_t) { return open(ordered_json::object()); }
  bool key(std::string& k) {
    frames_.back().key = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(ordered_json::array()); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    if (error_ == JsonTextResult::Error::kNone) error_ = JsonTextResult::Error::kSyntax;
    return false;
  }

  JsonTextResult::Error error() const { return error_; }
  ordered_json take() { return std::move(root_); }

 private:
  struct Frame {
    ordered_json value;
    std::unordered_map<std::string, size_t> index;  // objects: key → position in value
    std::string key;                                // objects: the key the next value takes
  };

  bool open(ordered_json empty) {
    if (static_cast<int>(frames_.size()) >= max_depth_) {
      error_ = JsonTextResult::Error::kTooDeep;
      return false;
    }
    frames_.push_back(Frame{std::move(empty), {}, {}});
    return true;
  }

  bool close() {
    ordered_json v = std::move(frames_.back().value);
    frames_.pop_back();
    return add(std::move(v));
  }

  bool add(ordered_json v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& f = frames_.back();
    if (f.value.is_array()) {
      f.value.get_ref<ordered_json::array_t&>().push_back(std::move(v));
      return true;
    }
    auto& obj = f.value.get_ref<ordered_json::object_t&>();
    auto [it, inserted] = f.index.try_emplace(f.key, obj.size());
    if (inserted) obj.emplace_back(std::move(f.key), std::move(v));
    else (obj.begin() + static_cast<std::ptrdiff_t>(it->second))->second = std::move(v);
    return true;
  }

  int max_depth_;
  std::vector<Frame> frames_;
  ordered_json root_;
  JsonTextResult::Error error_ = JsonTextResult::Error::kNone;
};

}  // namespace

JsonTextResult parse_json_text(std::string_view text, int max_depth) {
  BoundedBuilder b(max_depth);
  JsonTextResult r;
  // nlohmann's lexer takes a NUL byte for the end of the input, so "{...}\0junk" would pass.
  // JSON has no place for a raw NUL (inside strings it must be escaped): refuse it.
  if (text.find('\0') != std::string_view::npos) {
    r.error = JsonTextResult::Error::kSyntax;
    return r;
  }
  const bool ok = ordered_json::sax_parse(text.begin(), text.end(), &b);
  if (!ok) {
    r.error = b.error() == JsonTextResult::Error::kNone ? JsonTextResult::Error::kSyntax : b.error();
    return r;
  }
  r.value = b.take();
  return r;
}

}  // namespace di::recipe
