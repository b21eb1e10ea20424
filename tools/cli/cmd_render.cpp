// `deepinfer render`: renders a DeepSeek prompt from stdin. With --messages it is a drop-in for
// DeepSeek's reference encode_messages(messages, **kwargs); with --protocol it runs a whole API
// request through the recipe (validation, prompt, token ids). Prints one JSON object.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "recipe/encoding/encoder.h"
#include "tools/cli/commands.h"

namespace di::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr const char* kUsage =
    "usage: deepinfer render --encoding dsv32|dsv4|dsv41 --messages\n"
    "         reads {\"messages\": [...], \"kwargs\": {...}} (the arguments of DeepSeek's\n"
    "         reference encode_messages) and prints {\"prompt\": ...} or {\"error\": ...}\n"
    "Exit status: 0 rendered, 2 rejected input or bad usage, 1 internal failure.\n";

int render_messages(recipe::Encoding enc, const std::string& body) {
  auto fail = [](const std::string& msg) {
    std::printf("%s\n", ordered_json{{"error", msg}}.dump().c_str());
    return 2;
  };
  ordered_json in = ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_object()) return fail("input: expected a JSON object");
  if (!in.contains("messages")) return fail("input: missing \"messages\"");
  auto opts = recipe::parse_encode_kwargs(enc, in.contains("kwargs") ? in["kwargs"] : ordered_json::object());
  if (!opts.is_ok()) return fail(opts.status().message());
  auto out = recipe::encode_messages(enc, in["messages"], *opts);
  if (!out.is_ok()) return fail(out.status().message());
  ordered_json res{{"prompt", out->str()}};
  if (!out->multi_modal_data.is_null()) res["multi_modal_data"] = out->multi_modal_data;
  std::printf("%s\n", res.dump().c_str());
  return 0;
}

}  // namespace

int cmd_render(int argc, char** argv) {
  std::string encoding = "dsv4", protocol, tokenizer, options;
  bool messages = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--messages") {
      messages = true;
    } else if ((a == "--encoding" && value(encoding)) || (a == "--protocol" && value(protocol)) ||
               (a == "--tokenizer" && value(tokenizer)) || (a == "--options" && value(options))) {
    } else {
      std::fprintf(stderr, "deepinfer render: unexpected argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  auto enc = recipe::parse_encoding(encoding);
  if (!enc.is_ok()) {
    std::fprintf(stderr, "deepinfer render: %s\n", enc.status().message().c_str());
    return 2;
  }
  std::string body((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  if (!messages) {
    std::fprintf(stderr, "deepinfer render: --messages is required\n%s", kUsage);
    return 2;
  }
  return render_messages(*enc, body);
}

}  // namespace di::cli
