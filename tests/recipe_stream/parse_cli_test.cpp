// `deepinfer parse --request FILE`: the CLI's events and response equal what the library gives
// for the same request and output (di_recipe_prepare + di_parser_create through
// libdeepinfer.so), streaming and not; a request the recipe rejects prints the API's error body
// with exit status 2.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/common/run_command.h"

namespace {

using nlohmann::json;

struct CliResult {
  int exit_code = -1;
  std::string out;
};

std::string temp_file(const std::string& content) {
  char path[] = "/tmp/di_parse_cli_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

CliResult run_parse(const std::string& args, const std::string& stdin_text) {
  const std::string in = temp_file(stdin_text);
  const std::string cmd = std::string(DI_BINARY_DIR) + "/bin/deepinfer parse " + args + " < " + in;
  CliResult r;
  r.exit_code = di_test::run_command(cmd, &r.out);
  unlink(in.c_str());
  return r;
}

void append_sse(void* user, const char* event, size_t event_len, const char* data, size_t data_len) {
  std::string& s = *static_cast<std::string*>(user);
  if (event_len) s += "event: " + std::string(event, event_len) + "\n";
  s += "data: " + std::string(data, data_len) + "\n\n";
}

// The library's answer: SSE text when streaming, else the response JSON.
std::string library_parse(int32_t protocol, const std::string& request, const std::string& output,
                          const std::string& overrides, bool stream) {
  di_options* o = nullptr;
  di_options_create(&o, nullptr);
  const json req = json::parse(request);
  const std::string opts = json{{"recipe_encoding", "dsv41"}, {"recipe_model", req["model"]},
                                {"recipe_model_aliases", json::array()}}.dump();
  di_options_update_json(o, opts.data(), opts.size(), nullptr);
  di_recipe* r = nullptr;
  EXPECT_EQ(di_recipe_create(nullptr, 0, o, &r, nullptr), DI_OK);
  di_options_destroy(o);
  di_prepared* p = nullptr;
  EXPECT_EQ(di_recipe_prepare(r, protocol, request.data(), request.size(), &p, nullptr), DI_OK);
  di_parser* parser = nullptr;
  EXPECT_EQ(di_parser_create(p, overrides.data(), overrides.size(), &parser, nullptr), DI_OK);
  std::string sse;
  di_parse_chunk c{};
  c.struct_size = sizeof(c);
  c.text = output.data();
  c.text_len = output.size();
  c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;
  di_parse_push(parser, &c, append_sse, &sse, nullptr);
  c.text_len = 0;
  c.finish_reason = DI_PARSE_FINISH_STOP;
  di_parse_push(parser, &c, append_sse, &sse, nullptr);
  std::string out = sse;
  if (!stream) {
    char* body = nullptr;
    EXPECT_EQ(di_parse_response(parser, &body, nullptr, nullptr), DI_OK);
    out = json::parse(body).dump(2);
    di_free(body);
  }
  di_parser_destroy(parser);
  di_prepared_destroy(p);
  di_recipe_destroy(r);
  return out;
}

struct Case {
  const char* protocol;
  int32_t id;
  std::string request;
  std::string output;
};

std::vector<Case> cases() {
  const std::string call =
      "\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n"
      "<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n"
      "</｜DSML｜ invoke>\n</｜DSML｜ calls>";
  return {
      {"chat", DI_PROTOCOL_CHAT_COMPLETIONS,
       R"({"model":"m1","messages":[{"role":"user","content":"Weather?"}],"stop":["END"],
           "tools":[{"type":"function","function":{"name":"get_weather"}}]})",
       "Let me check.</think>Checking." + call},
      {"chat", DI_PROTOCOL_CHAT_COMPLETIONS,
       R"({"model":"m1","messages":[{"role":"user","content":"Hi"}],"thinking":{"type":"disabled"},
           "stop":["END"],"stream":true,"stream_options":{"include_usage":true}})",
       "Hello there END not this"},
      {"messages", DI_PROTOCOL_MESSAGES,
       R"({"model":"m2","max_tokens":64,"messages":[{"role":"user","content":"Weather?"}],
           "tools":[{"name":"get_weather","input_schema":{"type":"object"}}]})",
       "Hmm.</think>" + call},
  };
}

TEST(ParseCli, RequestFileGivesTheLibrarysEventsAndResponse) {
  const std::string overrides = R"({"request_id":"cli1","created":1700000000})";
  const std::string options_file = temp_file(overrides);
  for (const Case& c : cases()) {
    const std::string req_file = temp_file(c.request);
    for (bool stream : {false, true}) {
      SCOPED_TRACE(std::string(c.protocol) + (stream ? " stream " : " ") + c.request);
      CliResult r = run_parse(std::string("--protocol ") + c.protocol + " --request " + req_file +
                                  " --options " + options_file + (stream ? " --stream" : ""),
                              c.output);
      ASSERT_EQ(r.exit_code, 0) << r.out;
      const std::string expected = library_parse(c.id, c.request, c.output, overrides, stream);
      if (stream) EXPECT_EQ(r.out, expected);
      else EXPECT_EQ(json::parse(r.out).dump(2), expected);
    }
    unlink(req_file.c_str());
  }
  unlink(options_file.c_str());
}

TEST(ParseCli, RejectedRequestPrintsTheApiErrorBody) {
  const std::string req_file = temp_file(R"({"model":"m","messages":[]})");
  CliResult r = run_parse("--protocol chat --request " + req_file, "x");
  EXPECT_EQ(r.exit_code, 2);
  const json body = json::parse(r.out);
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(body["error"]["param"], "messages");
  unlink(req_file.c_str());
}

}  // namespace
