// Responses-only tools end to end (recipe-spec §5.3): namespace functions flattened to
// "{namespace}::{name}" with joined descriptions and "_1" suffixes on collision, coming back as
// function_call items split into namespace + name; the apply_patch custom tool as a one-string
// function for the model, its history items rendered as DSML, its calls coming back as
// custom_tool_call items with the raw input. Also: unknown request fields are ignored.
#include <gtest/gtest.h>

#include "recipe/prepare/prepare.h"
#include "recipe/protocol/output_parser.h"
#include "tests/recipe_stream/output_run.h"

namespace di::recipe {
namespace {

using nlohmann::json;

Prepared prepared_or_die(Protocol p, const std::string& body) {
  RecipeConfig cfg;
  cfg.encoding = Encoding::kDsv41;
  auto r = prepare(cfg, {}, p, body);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) throw std::runtime_error(r.status().message());
  return *r;
}

// The model's output run through the request's own parser options; the non-streaming body.
json respond(const Prepared& p, const std::string& output) {
  ParserOptions o = p.parser;
  o.request_id = "t1";
  o.created = 1;
  OutputParser parser(o);
  std::vector<SseEvent> events;
  OutputChunk c;
  c.text = output;
  parser.push(c, &events);
  return testing::stop_and_respond(parser, &events);
}

const char* kNamespaces = R"({"model":"deepseek-v4","reasoning":{"effort":"none"},"input":"Read a.txt",
  "tools":[{"type":"namespace","name":"files","description":"File tools.","tools":[
             {"type":"function","name":"read","description":"Read a file.",
              "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]},
           {"type":"namespace","name":"files","tools":[{"type":"function","name":"read"}]}]})";

TEST(ResponsesTools, NamespaceFunctionsAreFlattenedWithJoinedDescriptions) {
  Prepared p = prepared_or_die(Protocol::kResponses, kNamespaces);
  // The tool schema line, Python json.dumps style (recipe-spec §2.5): the namespace's and the
  // function's descriptions joined by a newline.
  EXPECT_NE(p.prompt.find(R"({"name": "files::read", "description": "File tools.\nRead a file.", )"
                          R"("parameters": {"type": "object", "properties": {"path": {"type": "string"}}}})"),
            std::string::npos)
      << p.prompt;
  // The second namespace's function collides and gets a suffix; it has no description at all.
  EXPECT_NE(p.prompt.find(R"("name": "files::read_1")"), std::string::npos) << p.prompt;
  ASSERT_EQ(p.parser.tools.size(), 2u);
  EXPECT_EQ(p.parser.tools[0].name, "files::read");
  EXPECT_EQ(p.parser.tools[1].name, "files::read_1");
  EXPECT_TRUE(p.parser.parse_tool_calls);
}

TEST(ResponsesTools, NamespacedCallComesBackSplitIntoNamespaceAndName) {
  Prepared p = prepared_or_die(Protocol::kResponses, kNamespaces);
  json r = respond(p, "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"files::read\">\n"
                      "<｜DSML｜ parameter name=\"path\" string=\"true\">a.txt</｜DSML｜ parameter>\n"
                      "</｜DSML｜ invoke>\n</｜DSML｜ calls>");
  ASSERT_EQ(r["output"].size(), 1u) << r.dump();
  const json& item = r["output"][0];
  EXPECT_EQ(item["type"], "function_call");
  EXPECT_EQ(item["namespace"], "files");
  EXPECT_EQ(item["name"], "read");
  EXPECT_EQ(json::parse(item["arguments"].get<std::string>()), json({{"path", "a.txt"}}));
  EXPECT_EQ(r["status"], "completed");
}

TEST(ResponsesTools, HistoryCallOfANamespacedFunctionRendersItsFlatName) {
  Prepared p = prepared_or_die(Protocol::kResponses, R"({"model":"deepseek-v4","reasoning":{"effort":"none"},
    "tools":[{"type":"namespace","name":"files","tools":[{"type":"function","name":"read"}]}],
    "input":[{"role":"user","content":"Read a.txt"},
      {"type":"function_call","call_id":"c1","namespace":"files","name":"read","arguments":"{\"path\": \"a.txt\"}"},
      {"type":"function_call_output","call_id":"c1","output":"hello"}]})");
  EXPECT_NE(p.prompt.find("<｜DSML｜ invoke name=\"files::read\">\n<｜DSML｜ parameter name=\"path\" "
                          "string=\"true\">a.txt</｜DSML｜ parameter>\n</｜DSML｜ invoke>"),
            std::string::npos)
      << p.prompt;
}

const char* kPatch = "*** Begin Patch\n*** Add File: a.txt\n+hello \"world\"\n*** End Patch";

TEST(ResponsesTools, ApplyPatchIsAOneStringFunctionForTheModel) {
  Prepared p = prepared_or_die(Protocol::kResponses, R"({"model":"deepseek-v4","reasoning":{"effort":"none"},
    "input":"Add a.txt","tools":[{"type":"custom","name":"apply_patch"}]})");
  const size_t at = p.prompt.find(R"({"name": "apply_patch", "description": ")");
  ASSERT_NE(at, std::string::npos) << p.prompt;
  const std::string line = p.prompt.substr(at, p.prompt.find('\n', at) - at);
  json schema = json::parse(line)["parameters"];
  EXPECT_EQ(schema["type"], "object");
  EXPECT_EQ(schema["properties"]["input"]["type"], "string");
  EXPECT_EQ(schema["required"], json::array({"input"}));
  ASSERT_EQ(p.parser.tools.size(), 1u);
  EXPECT_EQ(p.parser.tools[0].type, "custom");
}

TEST(ResponsesTools, ApplyPatchHistoryRendersItsInputAndItsCallComesBackAsCustomToolCall) {
  json body = json::parse(R"({"model":"deepseek-v4","reasoning":{"effort":"none"},
    "tools":[{"type":"custom","name":"apply_patch"}],
    "input":[{"role":"user","content":"Add a.txt"},
      {"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":""},
      {"type":"custom_tool_call_output","call_id":"c1","output":"Done"},
      {"role":"user","content":"Again"}]})");
  body["input"][1]["input"] = kPatch;
  Prepared p = prepared_or_die(Protocol::kResponses, body.dump());
  // In history the input is the one string parameter, verbatim (recipe-spec §3.2).
  EXPECT_NE(p.prompt.find(std::string("<｜DSML｜ invoke name=\"apply_patch\">\n<｜DSML｜ parameter name=\"input\" "
                                      "string=\"true\">") + kPatch + "</｜DSML｜ parameter>\n</｜DSML｜ invoke>"),
            std::string::npos)
      << p.prompt;
  EXPECT_NE(p.prompt.find("<tool_result>Done</tool_result>"), std::string::npos) << p.prompt;

  json r = respond(p, std::string("<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"apply_patch\">\n"
                                  "<｜DSML｜ parameter name=\"input\" string=\"true\">") +
                          kPatch + "</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>");
  ASSERT_EQ(r["output"].size(), 1u) << r.dump();
  const json& item = r["output"][0];
  EXPECT_EQ(item["type"], "custom_tool_call");
  EXPECT_EQ(item["name"], "apply_patch");
  EXPECT_EQ(item["input"], kPatch);
}

// Fields the real APIs do not know (or we do not use) are ignored, at every level; the prompt and
// the sampling options are exactly those of the same request without them.
TEST(RequestFields, UnknownFieldsAreIgnoredAtEveryLevel) {
  struct Pair {
    Protocol p;
    const char* plain;
    const char* extra;
  };
  const Pair pairs[] = {
      {Protocol::kChatCompletions,
       R"({"model":"deepseek-v4","temperature":0.3,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]})",
       R"({"model":"deepseek-v4","temperature":0.3,"service_tier":"flex","metadata":{"a":"b"},"store":true,
           "messages":[{"role":"user","name":"bob","content":[{"type":"text","text":"Hi","cache_control":{"type":"ephemeral"}}]}]})"},
      {Protocol::kResponses,
       R"({"model":"deepseek-v4","temperature":0.3,"input":[{"role":"user","content":[{"type":"input_text","text":"Hi"}]}]})",
       R"({"model":"deepseek-v4","temperature":0.3,"store":false,"metadata":{"a":"b"},"truncation":"auto",
           "input":[{"role":"user","id":"m1","content":[{"type":"input_text","text":"Hi","annotations":[]}]}]})"},
      {Protocol::kMessages,
       R"({"model":"deepseek-v4","max_tokens":9,"temperature":0.3,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]})",
       R"({"model":"deepseek-v4","max_tokens":9,"temperature":0.3,"metadata":{"user_id":"u"},"service_tier":"auto",
           "messages":[{"role":"user","content":[{"type":"text","text":"Hi","cache_control":{"type":"ephemeral"},"citations":null}]}]})"},
  };
  for (const Pair& c : pairs) {
    Prepared a = prepared_or_die(c.p, c.plain);
    Prepared b = prepared_or_die(c.p, c.extra);
    EXPECT_EQ(a.prompt, b.prompt) << protocol_name(c.p);
    EXPECT_EQ(a.engine.sampling.max_tokens, b.engine.sampling.max_tokens) << protocol_name(c.p);
    EXPECT_EQ(a.engine.sampling.temperature, b.engine.sampling.temperature) << protocol_name(c.p);
    EXPECT_EQ(a.engine.sampling.temperature, 0.3);
  }
}

}  // namespace
}  // namespace di::recipe
