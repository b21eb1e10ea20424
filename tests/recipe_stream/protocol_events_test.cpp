// OutputParser + the three event generators on every trace case: the event sequence has the
// API's shape, what a streaming client sees equals the non-streaming body, and neither depends on
// how the output was chunked. Also usage, include_usage and mid-stream errors.
#include <gtest/gtest.h>

#include "recipe/protocol/output_parser.h"
#include "tests/recipe_stream/event_checks.h"
#include "tests/recipe_stream/stream_case.h"

namespace di::recipe {
namespace {

using namespace testing;

struct ParseRun {
  std::vector<SseEvent> events;
  json response;
};

OutputFinish to_output_finish(EngineFinish f) {
  switch (f) {
    case EngineFinish::kStop: return OutputFinish::kStop;
    case EngineFinish::kLength: return OutputFinish::kLength;
    case EngineFinish::kStopSequence: return OutputFinish::kStopSequence;
    case EngineFinish::kContentFilter: return OutputFinish::kContentFilter;
    case EngineFinish::kNone: return OutputFinish::kNone;
  }
  return OutputFinish::kNone;
}

ParseRun run_case(const json& c, Protocol protocol, bool include_usage, const std::vector<Push>& pushes,
        TokenDecoder decoder = {}) {
  ParserOptions o = case_options(c);
  o.protocol = protocol;
  o.stream = true;
  o.include_usage = include_usage;
  o.request_id = "r1";
  o.created = 1700000000;
  o.model = "deepseek-v4.1-flash";
  OutputParser parser(o, std::move(decoder));
  ParseRun r;
  for (const Push& p : pushes) {
    OutputChunk chunk;
    chunk.text = p.text;
    chunk.token_ids = p.ids;
    chunk.prompt_tokens = 12;
    chunk.cached_prompt_tokens = 5;
    parser.push(chunk, &r.events);
  }
  OutputChunk last;
  last.finish = to_output_finish(engine_finish(c));
  if (last.finish == OutputFinish::kNone) parser.finish(&r.events);
  else parser.push(last, &r.events);
  EXPECT_TRUE(parser.done());
  r.response = parser.response();
  return r;
}

std::string expected_finish(Protocol p, const std::string& parsed) {
  static const std::map<std::string, std::vector<std::string>> kTable = {
      // parsed: chat, responses, messages (recipe-spec §5.5)
      {"stop", {"stop", "completed", "end_turn"}},
      {"end_of_stream", {"stop", "completed", "end_turn"}},
      {"stop_sequence", {"stop", "completed", "stop_sequence"}},
      {"tool_calls", {"tool_calls", "completed", "tool_use"}},
      {"length", {"length", "incomplete", "max_tokens"}},
      {"content_filter", {"content_filter", "incomplete", "refusal"}}};
  return kTable.at(parsed).at(static_cast<size_t>(p));
}

struct Param {
  size_t index;
  Protocol protocol;
  bool include_usage;
};

class ProtocolCase : public ::testing::TestWithParam<Param> {
 protected:
  json c = load_cases().at(GetParam().index);
  Protocol protocol = GetParam().protocol;
  bool include_usage = GetParam().include_usage;
};

TEST_P(ProtocolCase, EventsHaveTheApiShapeAndMatchTheResponse) {
  ParseRun r = run_case(c, protocol, include_usage, recorded_pushes(c));
  ClientView streamed;
  const std::string problem = check_events(protocol, r.events, include_usage, &streamed);
  ASSERT_EQ(problem, "") << c["name"];
  ClientView body = view_of_response(protocol, r.response);
  Folded f = replay(c, recorded_pushes(c));
  // A call the token limit cut went out in the stream before anyone knew; Chat's message and
  // Messages' content then leave it out, Responses keeps it as an incomplete item.
  if (f.cut_calls > 0 && protocol != Protocol::kResponses) {
    ASSERT_EQ(streamed.calls.size(), body.calls.size() + 1) << c["name"];
    streamed.calls.pop_back();
  }
  if (f.cut_calls > 0 && protocol == Protocol::kResponses) {
    const json& last = r.response["output"].back();
    EXPECT_EQ(last["type"], "function_call");
    EXPECT_EQ(last["status"], "incomplete");
  }
  if (protocol == Protocol::kMessages) {
    // tool_use input is parsed JSON in the body; compare as JSON.
    ASSERT_EQ(streamed.calls.size(), body.calls.size());
    for (size_t i = 0; i < body.calls.size(); ++i) {
      EXPECT_EQ(json::parse(streamed.calls[i].second), json::parse(body.calls[i].second));
      streamed.calls[i].second = body.calls[i].second;
    }
  }
  EXPECT_EQ(streamed, body) << c["name"];
  // And both say what the parser says.
  EXPECT_EQ(body.reasoning, f.reasoning);
  EXPECT_EQ(body.content, f.content);
  EXPECT_EQ(body.calls.size(), f.calls.size() + (protocol == Protocol::kResponses ? f.cut_calls : 0));
  EXPECT_EQ(body.finish, expected_finish(protocol, f.finish));
  for (const SseEvent& e : r.events) {
    if (e.data == "[DONE]") continue;
    EXPECT_FALSE(json::parse(e.data, nullptr, false).is_discarded()) << e.data;
  }
}

TEST_P(ProtocolCase, EventsDoNotDependOnChunking) {
  const bool tokens = is_token_case(c);
  ParseRun ref = run_case(c, protocol, include_usage, recorded_pushes(c));
  const auto ref_events = normalized(ref.events);
  json ref_body = ref.response;
  ref_body.erase("completed_at");
  size_t n = 0;
  for (const auto& pushes : chunkings(c)) {
    ParseRun r = run_case(c, protocol, include_usage, pushes, tokens ? case_decoder(c) : TokenDecoder());
    // Usage counts ids, so only text chunkings keep completion_tokens; compare without it.
    json body = r.response;
    body.erase("completed_at");
    if (tokens) {
      body.erase("usage");
      ref_body.erase("usage");
    }
    ASSERT_EQ(body, ref_body) << c["name"] << " chunking #" << n;
    auto events = normalized(r.events);
    if (!tokens) {
      ASSERT_EQ(json(events), json(ref_events)) << c["name"] << " chunking #" << n;
    }
    ++n;
  }
}

std::vector<Param> params() {
  std::vector<Param> v;
  const size_t n = load_cases().size();
  for (size_t i = 0; i < n; ++i) {
    v.push_back({i, Protocol::kChatCompletions, false});
    v.push_back({i, Protocol::kChatCompletions, true});
    v.push_back({i, Protocol::kResponses, false});
    v.push_back({i, Protocol::kMessages, false});
  }
  return v;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const char* names[] = {"chat", "responses", "messages"};
  return load_cases().at(info.param.index)["name"].get<std::string>() + "_" +
         names[static_cast<int>(info.param.protocol)] + (info.param.include_usage ? "_usage" : "");
}

INSTANTIATE_TEST_SUITE_P(Traces, ProtocolCase, ::testing::ValuesIn(params()), param_name);

ParserOptions basic(Protocol p) {
  ParserOptions o;
  o.protocol = p;
  o.request_id = "abc";
  o.created = 1;
  o.model = "m";
  o.stream = true;
  return o;
}

// One chunk "hi" that ends the output: 10 prompt tokens of which 4 cached, and `completion`.
std::vector<SseEvent> push_hi_with_usage(OutputParser& p, int64_t completion, OutputFinish finish) {
  std::vector<SseEvent> ev;
  OutputChunk c;
  c.text = "hi";
  c.prompt_tokens = 10;
  c.cached_prompt_tokens = 4;
  c.completion_tokens = completion;
  c.finish = finish;
  p.push(c, &ev);
  return ev;
}

TEST(ChatCompletionsEvents, UsageOnlyInAFinalChunkWithIncludeUsage) {
  for (bool include : {false, true}) {
    ParserOptions o = basic(Protocol::kChatCompletions);
    o.include_usage = include;
    OutputParser p(o);
    std::vector<SseEvent> ev = push_hi_with_usage(p, 7, OutputFinish::kStop);
    ASSERT_EQ(ev.back().data, "[DONE]");
    json last = json::parse(ev[ev.size() - 2].data);
    if (include) {
      EXPECT_TRUE(last["choices"].empty());
      EXPECT_EQ(last["usage"]["prompt_tokens"], 10);
      EXPECT_EQ(last["usage"]["completion_tokens"], 7);
      EXPECT_EQ(last["usage"]["total_tokens"], 17);
      EXPECT_EQ(last["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
    } else {
      for (size_t i = 0; i + 1 < ev.size(); ++i)
        EXPECT_FALSE(json::parse(ev[i].data).contains("usage")) << ev[i].data;
    }
    EXPECT_EQ(p.response()["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  }
}

TEST(MessagesEvents, UsageSplitsCachedPromptTokens) {
  OutputParser p(basic(Protocol::kMessages));
  std::vector<SseEvent> ev = push_hi_with_usage(p, 3, OutputFinish::kStop);
  json start = json::parse(ev[0].data);
  EXPECT_EQ(start["message"]["usage"]["input_tokens"], 6);
  EXPECT_EQ(start["message"]["usage"]["cache_read_input_tokens"], 4);
  json delta = json::parse(ev[ev.size() - 2].data);
  EXPECT_EQ(delta["type"], "message_delta");
  EXPECT_EQ(delta["usage"]["output_tokens"], 3);
}

TEST(ResponsesEvents, UsageCountsCachedTokens) {
  OutputParser p(basic(Protocol::kResponses));
  std::vector<SseEvent> ev = push_hi_with_usage(p, 3, OutputFinish::kLength);
  json last = json::parse(ev.back().data);
  EXPECT_EQ(last["type"], "response.incomplete");
  EXPECT_EQ(last["response"]["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(last["response"]["usage"]["input_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(last["response"]["usage"]["total_tokens"], 13);
}

TEST(OutputParser, MidStreamErrorBecomesTheApisErrorEvent) {
  for (Protocol proto : {Protocol::kChatCompletions, Protocol::kResponses, Protocol::kMessages}) {
    OutputParser p(basic(proto));
    std::vector<SseEvent> ev;
    OutputChunk c;
    c.text = "partial answer";
    p.push(c, &ev);
    OutputChunk bad;
    bad.finish = OutputFinish::kError;
    bad.error_message = "device lost";
    p.push(bad, &ev);
    EXPECT_TRUE(p.failed());
    ClientView v;
    EXPECT_EQ(check_events(proto, ev, false, &v), "");
    EXPECT_NE(ev.back().data.find("device lost"), std::string::npos) << ev.back().data;
    const size_t n = ev.size();
    p.push(c, &ev);
    p.finish(&ev);
    EXPECT_EQ(ev.size(), n) << "events after the terminal one";
  }
}

TEST(OutputParser, CompletionTokensCountIdsWhenTheEngineGivesNoCount) {
  OutputParser p(basic(Protocol::kChatCompletions));
  std::vector<SseEvent> ev;
  const int32_t ids[] = {5, 6, 7};
  OutputChunk c;
  c.text = "abc";
  c.token_ids = ids;
  p.push(c, &ev);
  p.finish(&ev);
  EXPECT_EQ(p.response()["usage"]["completion_tokens"], 3);
  EXPECT_EQ(p.response()["choices"][0]["finish_reason"], "stop");
}

}  // namespace
}  // namespace di::recipe
