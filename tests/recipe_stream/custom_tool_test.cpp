// Responses custom tools (apply_patch): the streamed `{"input": …}` arguments come out as the
// custom_tool_call's raw input — equal to the JSON string's value as nlohmann/json decodes it,
// however the JSON was split or escaped — in events of the Responses stream shape.
#include <gtest/gtest.h>

#include "recipe/protocol/output_parser.h"
#include "recipe/protocol/responses/custom_tool_input.h"
#include "tests/recipe_stream/event_checks.h"
#include "tests/recipe_stream/output_run.h"

namespace di::recipe {
namespace {

using namespace testing;

const std::vector<std::string> kInputs = {
    "",
    "*** Begin Patch\n*** Update File: a.py\n@@\n-x = \"1\"\n+x = \"2\"\n*** End Patch\n",
    "tab\there, back\\slash, slash/, \b\f\r, nul-ish \x01\x1f",
    "日本語の パッチ 🦀 and 𝄞 (astral)",
    "\"quoted\" and \\\"escaped\\\"",
};

std::string decode_split(const std::vector<std::string>& pieces) {
  CustomToolInput d;
  std::string out;
  for (const std::string& p : pieces) out += d.push(p);
  return out + d.finish();
}

TEST(CustomToolInput, DecodesTheInputStringSplitAtEveryByte) {
  for (const std::string& input : kInputs) {
    for (bool ascii : {false, true}) {
      // The reference encoder is nlohmann/json (ensure_ascii writes \uXXXX surrogate pairs).
      const std::string args = "{\"input\": " + json(input).dump(-1, ' ', ascii) + "}";
      ASSERT_EQ(json::parse(args)["input"], input);
      EXPECT_EQ(decode_split({args}), input) << args;
      for (size_t i = 1; i < args.size(); ++i)
        EXPECT_EQ(decode_split({args.substr(0, i), args.substr(i)}), input) << args << " @" << i;
      std::vector<std::string> bytes;
      for (char c : args) bytes.push_back(std::string(1, c));
      EXPECT_EQ(decode_split(bytes), input) << args;
    }
  }
}

TEST(CustomToolInput, WhitespaceBetweenTokensIsAllowed) {
  EXPECT_EQ(decode_split({"{ \n\"input\"\t:  \"a\\nb\" }"}), "a\nb");
}

TEST(CustomToolInput, OtherShapesPassThroughRawAndNoArgumentsIsEmpty) {
  EXPECT_EQ(decode_split({"{\"patch\": \"x\"}"}), "{\"patch\": \"x\"}");
  EXPECT_EQ(decode_split({"{\"inp", "ut2\": 1}"}), "{\"input2\": 1}");
  EXPECT_EQ(decode_split({"{}"}), "");
  EXPECT_EQ(decode_split({"{\"input\": 42}"}), "{\"input\": 42}");
  // Cut off inside an escape: what was written is kept.
  EXPECT_EQ(decode_split({"{\"input\": \"ab\\u00"}), "ab\\u00");
}

struct ParsedRun {
  std::vector<SseEvent> events;
  json response;
};

ParsedRun run(const std::vector<std::string>& pieces) {
  ParserOptions o;
  o.protocol = Protocol::kResponses;
  o.stream = true;
  o.request_id = "r1";
  o.created = 1700000000;
  o.parse_tool_calls = true;
  o.tools.push_back({"apply_patch", json::object(), false, "custom"});
  o.tools.push_back({"get_weather", json::object(), false, "function"});
  OutputParser p(o);
  ParsedRun r;
  for (const std::string& s : pieces) {
    OutputChunk c;
    c.text = s;
    p.push(c, &r.events);
  }
  r.response = stop_and_respond(p, &r.events);
  return r;
}

const std::string kPatch = kInputs[1];

std::string model_output() {
  return "Patching now.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"apply_patch\">\n"
         "<｜DSML｜ parameter name=\"input\" string=\"true\">" + kPatch +
         "</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n<｜DSML｜ invoke name=\"get_weather\">\n"
         "<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n"
         "</｜DSML｜ invoke>\n</｜DSML｜ calls>";
}

TEST(ResponsesCustomTool, CallOfACustomToolIsACustomToolCallWithTheRawInput) {
  ParsedRun r = run({model_output()});
  ClientView streamed;
  ASSERT_EQ(check_responses(r.events, &streamed), "");
  ASSERT_EQ(streamed.calls.size(), 2u);
  EXPECT_EQ(streamed.calls[0], std::make_pair(std::string("apply_patch"), kPatch));
  EXPECT_EQ(json::parse(streamed.calls[1].second), json({{"city", "Paris"}}));
  EXPECT_EQ(view_of_response(Protocol::kResponses, r.response), streamed);

  const json& out = r.response["output"];
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0]["type"], "message");
  EXPECT_EQ(out[0]["phase"], "commentary");  // a tool call followed it
  EXPECT_EQ(out[1]["type"], "custom_tool_call");
  EXPECT_EQ(out[1]["id"], "ctc_r1_1");
  EXPECT_EQ(out[1]["call_id"], "call_r1_0");
  EXPECT_EQ(out[1]["status"], "completed");
  EXPECT_FALSE(out[1].contains("arguments"));
  EXPECT_EQ(out[2]["type"], "function_call");
  EXPECT_EQ(out[2]["call_id"], "call_r1_1");
  bool done_seen = false;
  for (const SseEvent& e : r.events)
    if (e.name == "response.custom_tool_call_input.done") {
      done_seen = true;
      EXPECT_EQ(json::parse(e.data)["input"], kPatch);
    }
  EXPECT_TRUE(done_seen);
}

TEST(ResponsesCustomTool, EventsDoNotDependOnChunking) {
  const std::string all = model_output();
  const std::vector<json> ref = normalized(run({all}).events);
  for (size_t i = 1; i < all.size(); ++i) {
    ParsedRun r = run({all.substr(0, i), all.substr(i)});
    ClientView v;
    ASSERT_EQ(check_responses(r.events, &v), "") << "split at " << i;
    ASSERT_EQ(normalized(r.events), ref) << "split at " << i;
  }
}

TEST(ResponsesCustomTool, MessageWithoutToolCallIsTheFinalAnswer) {
  ParsedRun r = run({"All done."});
  ASSERT_EQ(r.response["output"].size(), 1u);
  EXPECT_EQ(r.response["output"][0]["phase"], "final_answer");
}

}  // namespace
}  // namespace di::recipe
