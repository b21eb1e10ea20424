// Encoder dispatch and the binding of the reference encoders' keyword arguments.
#include "recipe/encoding/encoder.h"

#include "base/enum_names.h"

namespace di::recipe {

using ordered_json = nlohmann::ordered_json;

namespace {

constexpr EnumName<Encoding> kEncodingNames[] = {
    {Encoding::kDsv32, "dsv32"}, {Encoding::kDsv4, "dsv4"}, {Encoding::kDsv41, "dsv41"}};

}  // namespace

std::string_view encoding_name(Encoding e) { return name_of(kEncodingNames, e, "dsv4"); }

Result<Encoding> parse_encoding(std::string_view name) {
  return parse_enum(kEncodingNames, name, "encoding");
}

Result<RenderOptions> parse_encode_kwargs(Encoding e, const ordered_json& kwargs) {
  RenderOptions o;
  if (kwargs.is_null()) return Status::invalid_argument(
      "TypeError: encode_messages() missing 1 required positional argument: 'thinking_mode'");
  if (!kwargs.is_object()) return Status::invalid_argument("kwargs: expected an object");
  bool have_mode = false;
  for (const auto& item : kwargs.items()) {
    const std::string& k = item.key();
    const ordered_json& v = item.value();
    auto bad_type = [&](const char* want) {
      return Status::invalid_argument("TypeError: encode_messages() argument '" + k +
                                      "' must be " + want);
    };
    if (k == "thinking_mode") {
      // Any value is bound; the encoders themselves reject modes other than chat/thinking.
      o.thinking_mode = v.is_string() ? v.get<std::string>() : v.dump();
      have_mode = true;
    } else if (k == "context") {
      if (v.is_null()) continue;
      if (!v.is_array()) return bad_type("a list");
      o.context = v;
    } else if (k == "drop_thinking") {
      if (!v.is_boolean()) return bad_type("a bool");
      o.drop_thinking = v.get<bool>();
    } else if (k == "add_default_bos_token") {
      if (!v.is_boolean()) return bad_type("a bool");
      o.add_default_bos_token = v.get<bool>();
    } else if (k == "reasoning_effort" && e != Encoding::kDsv32) {
      o.reasoning_effort = v;
    } else if (k == "reasoning_effort_profile" && e == Encoding::kDsv4) {
      if (!v.is_string()) return bad_type("a str");
      o.reasoning_effort_profile = v.get<std::string>();
    } else if (k == "return_multi_modal_data" && e == Encoding::kDsv41) {
      if (!v.is_boolean()) return bad_type("a bool");
      o.return_multi_modal_data = v.get<bool>();
    } else {
      return Status::invalid_argument(
          "TypeError: encode_messages() got an unexpected keyword argument '" + k + "'");
    }
  }
  if (!have_mode)
    return Status::invalid_argument(
        "TypeError: encode_messages() missing 1 required positional argument: 'thinking_mode'");
  return o;
}

Result<RenderedPrompt> encode_messages(Encoding e, const ordered_json& messages,
                                       const RenderOptions& options) {
  if (!messages.is_array()) return Status::invalid_argument("messages: expected a list");
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object())
      return Status::invalid_argument("messages[" + std::to_string(i) + "]: expected a dict");
  }
  for (size_t i = 0; i < options.context.size(); ++i) {
    if (!options.context[i].is_object())
      return Status::invalid_argument("context[" + std::to_string(i) + "]: expected a dict");
  }
  switch (e) {
    case Encoding::kDsv32: return encode_messages_dsv32(messages, options);
    case Encoding::kDsv4: return encode_messages_dsv4(messages, options, false);
    case Encoding::kDsv41: return encode_messages_dsv4(messages, options, true);
  }
  return Status::internal("unknown encoding");
}

}  // namespace di::recipe
