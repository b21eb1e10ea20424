// `deepinfer parse`: raw model output on stdin → an API's streaming events (SSE) or its final
// response, through the same OutputParser the library uses. Parser options come from the API
// request (--request, through the recipe's prepare step) and flags; parsing is the recipe's.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "recipe/prepare/prepare.h"
#include "recipe/protocol/output_parser.h"
#include "tools/cli/cli_args.h"
#include "tools/cli/commands.h"

namespace di::cli {
namespace {

using json = nlohmann::json;

constexpr const char* kUsage =
    "usage: deepinfer parse --protocol chat|responses|messages [--encoding dsv4|dsv41]\n"
    "         [--tokenizer PATH] [--request FILE] [--options FILE] [--stream]\n"
    "  Reads raw model output text on stdin (what follows the prompt) and prints the API's\n"
    "  events as SSE lines (--stream) or its final response JSON.\n"
    "  --request FILE   the API request, validated and prepared as the library does; thinking,\n"
    "                   tools, tool_choice, stop, response_format, stream, include_usage and\n"
    "                   model are taken from it (a rejected request prints its error body)\n"
    "  --options FILE   parser options as JSON (the keys di_parser_create_from_json takes),\n"
    "                   applied over what --request gave\n"
    "  --tokenizer PATH tokenizer.json: control token ids for <think>, </think>, the DSML token\n"
    "                   and EOS. Markers in stdin text are recognised by their text, as a\n"
    "                   tokenizer's added-token matching would\n"
    "Exit status: 0 parsed, 2 bad usage or input, 1 internal failure.\n";

int usage_error(const std::string& msg) { return cli_usage_error("parse", msg, kUsage); }

// The parser options of an API request, from the recipe's own prepare step (validation,
// thinking, tools and tool_choice, stops, response_format, include_usage) exactly as the library
// derives them; the request's model name is served as it is. A rejected request prints the
// API's error body.
bool options_from_request(recipe::Protocol protocol, recipe::Encoding encoding,
                          const std::string& body, recipe::ParserOptions* o, std::string* error) {
  const json req = json::parse(body, nullptr, false);
  recipe::RecipeConfig config;
  config.encoding = encoding;
  if (req.is_object() && req.contains("model") && req["model"].is_string())
    config.models = recipe::ModelAliases(req["model"].get<std::string>(), {});
  auto prepared = recipe::prepare(config, {}, protocol, body);
  if (!prepared.is_ok()) {
    *error = recipe::api_error_from_status(protocol, prepared.status()).body().dump();
    return false;
  }
  *o = prepared->parser;
  return true;
}

// Control token ids from tokenizer.json's added_tokens.
bool apply_tokenizer(const std::string& path, recipe::ParserOptions* o, std::string* error) {
  std::string text;
  if (!read_whole_file(path, &text)) return *error = path + ": cannot read", false;
  json tok = json::parse(text, nullptr, false);
  if (tok.is_discarded() || !tok.contains("added_tokens") || !tok["added_tokens"].is_array())
    return *error = path + ": not a tokenizer.json (no added_tokens array)", false;
  for (const json& t : tok["added_tokens"]) {
    if (!t.contains("content") || !t.contains("id") || !t["id"].is_number_integer()) continue;
    const std::string c = t["content"];
    const int32_t id = t["id"];
    if (c == "<think>") o->control_tokens.think_start = id;
    else if (c == "</think>") o->control_tokens.think_end = id;
    else if (c == "｜DSML｜") o->control_tokens.dsml = id;
    else if (c == "<｜end▁of▁sentence｜>") o->control_tokens.eos = id;
  }
  return true;
}

}  // namespace

int cmd_parse(int argc, char** argv) {
  std::string protocol_name, encoding = "dsv41", tokenizer, request_path, options_path;
  bool stream = false;
  const int rc = parse_cli_options("parse", argc, argv, kUsage,
                                   {{"--stream", nullptr, &stream},
                                    {"--protocol", &protocol_name},
                                    {"--encoding", &encoding},
                                    {"--tokenizer", &tokenizer},
                                    {"--request", &request_path},
                                    {"--options", &options_path}});
  if (rc >= 0) return rc;
  if (protocol_name.empty()) return usage_error("--protocol is required");
  auto protocol = recipe::parse_protocol(protocol_name);
  if (!protocol.is_ok()) return usage_error(protocol.status().message());
  if (encoding != "dsv4" && encoding != "dsv41")
    return usage_error("--encoding: expected dsv4 or dsv41, got '" + encoding + "'");

  recipe::ParserOptions o;
  if (!options_path.empty() || !request_path.empty()) {
    json base = json::object();
    if (!request_path.empty()) {
      std::string text;
      if (!read_whole_file(request_path, &text)) return usage_error(request_path + ": cannot read");
      std::string error;
      const auto enc = encoding == "dsv4" ? recipe::Encoding::kDsv4 : recipe::Encoding::kDsv41;
      if (!options_from_request(*protocol, enc, text, &o, &error)) {
        std::printf("%s\n", error.c_str());
        return 2;
      }
      base = recipe::parser_options_to_json(o);
    }
    if (!options_path.empty()) {
      std::string text;
      if (!read_whole_file(options_path, &text)) return usage_error(options_path + ": cannot read");
      json extra = json::parse(text, nullptr, false);
      if (extra.is_discarded() || !extra.is_object())
        return usage_error(options_path + ": expected a JSON object");
      base.update(extra);
    }
    auto parsed = recipe::parser_options_from_json(base);
    if (!parsed.is_ok()) return usage_error(parsed.status().message());
    o = *parsed;
  }
  o.protocol = *protocol;
  o.encoding = encoding == "dsv4" ? recipe::EncodingVersion::kDsv4 : recipe::EncodingVersion::kDsv41;
  o.stream = stream || o.stream;
  if (!tokenizer.empty()) {
    std::string error;
    if (!apply_tokenizer(tokenizer, &o, &error)) return usage_error(error);
  }

  recipe::OutputParser parser(o);
  std::vector<recipe::SseEvent> events;
  auto flush = [&] {
    if (stream)
      for (const auto& e : events) std::fputs(recipe::to_sse(e).c_str(), stdout);
    events.clear();
  };
  char buf[4096];
  while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
    recipe::OutputChunk chunk;
    chunk.text = std::string_view(buf, static_cast<size_t>(std::cin.gcount()));
    parser.push(chunk, &events);
    flush();
  }
  // stdin holds the whole output: its end is the model's end of turn.
  recipe::OutputChunk last;
  last.finish = recipe::OutputFinish::kStop;
  parser.push(last, &events);
  flush();
  if (!stream) std::printf("%s\n", parser.response().dump(2, ' ', false, json::error_handler_t::replace).c_str());
  return 0;
}

}  // namespace di::cli
