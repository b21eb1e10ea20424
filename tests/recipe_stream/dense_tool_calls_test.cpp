// The dense families' tool calls through StreamParser: Qwen2.5 / Qwen3's Hermes form
// (`<tool_call>` JSON `</tool_call>`, with Qwen3's `<think>`) and Llama-3.1/3.2's JSON message
// (bare or after `<|python_tag|>`, calls separated by `;`), each output split at every byte
// boundary, one byte a push and in 3-byte strides: the folded result (reasoning, content, calls,
// finish) is the same for every chunking, the deltas of each call add up to its final arguments,
// and cut or malformed calls are not calls.
#include <gtest/gtest.h>

#include "tests/recipe_stream/stream_case.h"

namespace di::recipe::testing {
namespace {

json dense_case(const std::string& format, const std::string& text, const char* engine_finish = "stop",
                bool tools = true) {
  json options = {{"tool_format", format}, {"protocol", "chat"}};
  if (tools) options["tools"] = json::array({{{"name", "get_weather"}}, {{"name", "get_time"}}});
  return {{"options", options}, {"chunks", json::array({text})},
          {"engine_finish", engine_finish ? json(engine_finish) : json(nullptr)}};
}

struct Expected {
  std::string reasoning, content;
  std::vector<std::pair<std::string, std::string>> calls;
  std::string finish;
  int cut_calls = 0;
};

void expect_every_chunking(const json& c, const Expected& want) {
  const auto all = chunkings(c);
  ASSERT_GT(all.size(), 3u);
  for (size_t k = 0; k < all.size(); ++k) {
    SCOPED_TRACE("chunking " + std::to_string(k) + " of " + std::to_string(all.size()));
    Folded f;
    ASSERT_NO_THROW(f = replay(c, all[k]));
    EXPECT_EQ(f.reasoning, want.reasoning);
    EXPECT_EQ(f.content, want.content);
    EXPECT_EQ(f.calls, want.calls);
    EXPECT_EQ(f.finish, want.finish);
    EXPECT_EQ(f.cut_calls, want.cut_calls);
    if (::testing::Test::HasFailure()) return;  // one chunking's report is enough
  }
}

const std::string kWeather = R"({"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}})";

TEST(HermesToolCalls, Qwen25ContentThenACall) {
  expect_every_chunking(dense_case("hermes", "I'll check.\n<tool_call>\n" + kWeather + "\n</tool_call>"),
                        {"", "I'll check.", {{"get_weather", R"({"city": "Paris", "unit": "c"})"}}, "tool_calls"});
}

TEST(HermesToolCalls, TwoCallsAndTheEndOfTurnText) {
  expect_every_chunking(
      dense_case("hermes", "<tool_call>\n" + kWeather + "\n</tool_call>\n<tool_call>\n" +
                               R"({"name": "get_time", "arguments": {}})" + "\n</tool_call><|im_end|>"),
      {"", "", {{"get_weather", R"({"city": "Paris", "unit": "c"})"}, {"get_time", "{}"}}, "tool_calls"});
}

TEST(HermesToolCalls, Qwen3ReasoningThenACall) {
  expect_every_chunking(
      dense_case("hermes", "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n" + kWeather + "\n</tool_call>"),
      {"The user wants the weather.", "", {{"get_weather", R"({"city": "Paris", "unit": "c"})"}}, "tool_calls"});
}

TEST(HermesToolCalls, NestedArgumentsWithBracesAndEscapesInStrings) {
  const std::string args = R"({"q": "a}\"{b]", "n": [1, {"x": [2, "]"]}], "t": true})";
  expect_every_chunking(
      dense_case("hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + args + "}\n</tool_call>"),
      {"", "", {{"get_weather", args}}, "tool_calls"});
}

TEST(HermesToolCalls, ArgumentsBeforeTheNameAreReadWhole) {
  expect_every_chunking(
      dense_case("hermes", "<tool_call>\n{\"arguments\": {\"tz\": \"UTC\"}, \"name\": \"get_time\"}\n</tool_call>"),
      {"", "", {{"get_time", R"({"tz":"UTC"})"}}, "tool_calls"});
}

TEST(HermesToolCalls, ArgumentsAsAJsonStringAreReadAsTheObject) {
  expect_every_chunking(
      dense_case("hermes", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": \"{\\\"tz\\\": \\\"UTC\\\"}\"}\n</tool_call>"),
      {"", "", {{"get_time", R"({"tz":"UTC"})"}}, "tool_calls"});
}

TEST(HermesToolCalls, ACallCutByTheTokenLimitIsNoCall) {
  // Cut inside the arguments: the call started (streamed), then kToolCallCut.
  expect_every_chunking(dense_case("hermes", "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa", "length"),
                        {"", "Sure.", {}, "length", 1});
  // Cut before the name ended: nothing started, nothing reported.
  expect_every_chunking(dense_case("hermes", "Sure.\n<tool_call>\n{\"name\": \"get_wea", "length"),
                        {"", "Sure.", {}, "length", 0});
}

TEST(HermesToolCalls, MalformedArgumentsAreNoCall) {
  expect_every_chunking(
      dense_case("hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }}\n</tool_call>"),
      {"", "", {}, "stop", 1});
  // A call after a malformed one is dropped with the rest of the output (the stream already
  // showed the malformed one; a later call must not reuse its index).
  expect_every_chunking(
      dense_case("hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }}\n</tool_call>\n<tool_call>\n" +
                               kWeather + "\n</tool_call> bye"),
      {"", "", {}, "stop", 1});
  expect_every_chunking(
      dense_case("llama3_json", R"({"name": "get_time", "parameters": {"x": tru}}; {"name": "get_time", "parameters": {}})"),
      {"", "", {}, "stop", 1});
  // The model's end of turn inside the arguments: malformed, not cut, and still no call.
  expect_every_chunking(dense_case("hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P"),
                        {"", "", {}, "stop", 1});
}

TEST(HermesToolCalls, ABodyThatIsNotJsonIsText) {
  expect_every_chunking(dense_case("hermes", "Look: <tool_call>\nnot json\n</tool_call> done"),
                        {"", "Look: <tool_call>\nnot json\n</tool_call> done", {}, "stop"});
  expect_every_chunking(dense_case("hermes", "<tool_call>\n{\"city\": \"Paris\"}\n</tool_call>"),
                        {"", "<tool_call>\n{\"city\": \"Paris\"}\n</tool_call>", {}, "stop"});
}

TEST(HermesToolCalls, WithoutToolsTheMarkupIsText) {
  const std::string text = "<tool_call>\n" + kWeather + "\n</tool_call>";
  expect_every_chunking(dense_case("hermes", text + "<|im_end|>", "stop", /*tools=*/false), {"", text, {}, "stop"});
}

TEST(LlamaJsonToolCalls, TheWholeMessageIsACall) {
  expect_every_chunking(dense_case("llama3_json", R"({"name": "get_weather", "parameters": {"city": "Paris"}})"),
                        {"", "", {{"get_weather", R"({"city": "Paris"})"}}, "tool_calls"});
}

TEST(LlamaJsonToolCalls, PythonTagFormAndEndOfMessageText) {
  expect_every_chunking(
      dense_case("llama3_json", R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>)"),
      {"", "", {{"get_weather", R"({"city": "Paris"})"}}, "tool_calls"});
}

TEST(LlamaJsonToolCalls, CallsSeparatedBySemicolons) {
  expect_every_chunking(
      dense_case("llama3_json", R"({"name": "get_time", "parameters": {}}; {"name": "get_weather", "parameters": {"city": "Rome"}})"),
      {"", "", {{"get_time", "{}"}, {"get_weather", R"({"city": "Rome"})"}}, "tool_calls"});
}

TEST(LlamaJsonToolCalls, AnswersStayText) {
  expect_every_chunking(dense_case("llama3_json", "The weather is fine.<|eot_id|>"), {"", "The weather is fine.", {}, "stop"});
  expect_every_chunking(dense_case("llama3_json", "Use {x} here."), {"", "Use {x} here.", {}, "stop"});
  expect_every_chunking(dense_case("llama3_json", R"({"answer": 42, "name": 3})"), {"", R"({"answer": 42, "name": 3})", {}, "stop"});
  // A JSON object that does not close, at the model's own end: text.
  expect_every_chunking(dense_case("llama3_json", R"({"answer": [1, 2)"), {"", R"({"answer": [1, 2)", {}, "stop"});
}

TEST(LlamaJsonToolCalls, ACutCallIsNoCallAndFinishesLength) {
  expect_every_chunking(dense_case("llama3_json", R"({"name": "get_weather", "parameters": {"city": "Pa)", "length"),
                        {"", "", {}, "length", 1});
  // The second of two calls cut: the first stands, the finish is still length.
  expect_every_chunking(
      dense_case("llama3_json", R"({"name": "get_time", "parameters": {}}; {"name": "get_weather", "parameters": {"ci)", "length"),
      {"", "", {{"get_time", "{}"}}, "length", 1});
}

}  // namespace
}  // namespace di::recipe::testing
