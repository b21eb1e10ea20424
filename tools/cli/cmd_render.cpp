// `deepinfer render`: renders a DeepSeek prompt from stdin. With --messages it is a drop-in for
// DeepSeek's reference encode_messages(messages, **kwargs); with --protocol it runs a whole API
// request through the recipe (validation, prompt, token ids). Prints one JSON object.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "recipe/encoding/encoder.h"
#include "tools/cli/cli_args.h"
#include "tools/cli/commands.h"

namespace di::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr const char* kUsage =
    "usage: deepinfer render --encoding dsv32|dsv4|dsv41 --messages\n"
    "         reads {\"messages\": [...], \"kwargs\": {...}} (the arguments of DeepSeek's\n"
    "         reference encode_messages) and prints {\"prompt\": ...} or {\"error\": ...}\n"
    "       deepinfer render [--tokenizer PATH] --encoding dsv32|dsv4|dsv41\n"
    "                        --protocol chat|responses|messages [--options JSON]\n"
    "         reads an API request body and prints {\"prompt\", \"ids\", \"special_ranges\",\n"
    "         \"options\"} or the API's error body; --options sets recipe_* keys as JSON\n"
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

// Through the C ABI, exactly as an embedding program prepares a request.
int render_request(const std::string& encoding, const std::string& protocol,
                   const std::string& tokenizer, const std::string& options_json,
                   const std::string& body) {
  int32_t proto = protocol == "chat" ? DI_PROTOCOL_CHAT_COMPLETIONS
                  : protocol == "responses" ? DI_PROTOCOL_RESPONSES
                  : protocol == "messages" ? DI_PROTOCOL_MESSAGES : 0;
  if (proto == 0) {
    std::fprintf(stderr, "deepinfer render: --protocol must be chat, responses or messages\n%s", kUsage);
    return 2;
  }
  di_error* err = nullptr;
  di_options* opts = nullptr;
  di_recipe* recipe = nullptr;
  auto setup_failed = [&](const char* what) {
    std::fprintf(stderr, "deepinfer render: %s: %s\n", what, di_error_message(err));
    di_error_destroy(err);
    di_options_destroy(opts);
    return 2;
  };
  if (di_options_create(&opts, &err) != DI_OK) return setup_failed("options");
  if (!options_json.empty() &&
      di_options_update_json(opts, options_json.data(), options_json.size(), &err) != DI_OK)
    return setup_failed("--options");
  if (di_options_set_str(opts, "recipe_encoding", encoding.data(), encoding.size(), &err) != DI_OK)
    return setup_failed("--encoding");
  if (di_recipe_create(tokenizer.data(), tokenizer.size(), opts, &recipe, &err) != DI_OK)
    return setup_failed("recipe");
  di_options_destroy(opts);
  opts = nullptr;

  di_prepared* p = nullptr;
  di_status st = di_recipe_prepare(recipe, proto, body.data(), body.size(), &p, &err);
  di_recipe_destroy(recipe);
  if (st != DI_OK) {
    nlohmann::json detail = nlohmann::json::parse(di_error_detail(err), nullptr, false);
    if (detail.is_object() && detail.contains("body")) {
      std::printf("%s\n", detail["body"].dump().c_str());
    } else {
      std::printf("%s\n", nlohmann::json{{"error", {{"message", di_error_message(err)}}}}.dump().c_str());
    }
    di_error_destroy(err);
    return st == DI_E_INTERNAL || st == DI_E_OOM ? 1 : 2;
  }
  auto j = [&](const char* s) { return nlohmann::json::parse(s); };
  nlohmann::ordered_json out;
  out["prompt"] = di_prepared_prompt(p, nullptr);
  size_t n = 0;
  const int32_t* ids = di_prepared_token_ids(p, &n);
  out["ids"] = std::vector<int32_t>(ids, ids + n);
  const uint32_t* ranges = di_prepared_special_ranges(p, &n);
  nlohmann::json r = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) r.push_back({ranges[2 * i], ranges[2 * i + 1]});
  out["special_ranges"] = r;
  out["options"] = {{"info", j(di_prepared_info_json(p, nullptr))},
                    {"sampling", j(di_prepared_sampling_json(p, nullptr))},
                    {"stop", j(di_prepared_stop_sequences_json(p, nullptr))},
                    {"stream", di_prepared_stream(p) != 0},
                    {"constraint", j(di_prepared_constraint_json(p, nullptr))},
                    {"parser", j(di_prepared_parser_options_json(p, nullptr))},
                    {"images", j(di_prepared_images_json(p, nullptr))}};
  di_prepared_destroy(p);
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int cmd_render(int argc, char** argv) {
  std::string encoding = "dsv4", protocol, tokenizer, options;
  bool messages = false;
  const int rc = parse_cli_options("render", argc, argv, kUsage,
                                   {{"--messages", nullptr, &messages},
                                    {"--encoding", &encoding},
                                    {"--protocol", &protocol},
                                    {"--tokenizer", &tokenizer},
                                    {"--options", &options}});
  if (rc >= 0) return rc;
  auto enc = recipe::parse_encoding(encoding);
  if (!enc.is_ok()) {
    std::fprintf(stderr, "deepinfer render: %s\n", enc.status().message().c_str());
    return 2;
  }
  const std::string body = read_all_stdin();
  if (messages) return render_messages(*enc, body);
  return render_request(encoding, protocol, tokenizer, options, body);
}

}  // namespace di::cli
