// libFuzzer target: random and mutated model output through StreamParser and OutputParser for
// every API. The first bytes pick the options and the chunking; the rest is the output. Aborts
// when an invariant breaks: every stream ends with exactly one terminal event, every event's
// data and the final body parse as JSON, a closed tool call's arguments are a JSON object, and
// the parse does not depend on the chunking.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/protocol/output_parser.h"
#include "recipe/stream/stream_parser.h"

namespace {

using namespace di::recipe;
using nlohmann::json;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

struct Fold {
  std::string reasoning, content, calls, finish;
  bool operator==(const Fold&) const = default;
};

void fold(const std::vector<ParsedEvent>& ev, Fold* f) {
  for (const ParsedEvent& e : ev) {
    switch (e.kind) {
      case ParsedEvent::Kind::kReasoning: f->reasoning += e.text; break;
      case ParsedEvent::Kind::kContent: f->content += e.text; break;
      case ParsedEvent::Kind::kToolCallStart: f->calls += "|" + e.text + ":"; break;
      case ParsedEvent::Kind::kToolArguments: f->calls += e.text; break;
      case ParsedEvent::Kind::kToolCallEnd: {
        json args = json::parse(e.text, nullptr, false);
        check(!args.is_discarded() && args.is_object(), "closed tool call arguments are a JSON object");
        break;
      }
    }
  }
}

std::vector<size_t> cuts(const uint8_t* sizes, size_t n, size_t total) {
  std::vector<size_t> out;
  size_t at = 0, k = 0;
  while (at < total) {
    const size_t step = n == 0 ? total : 1 + sizes[k++ % n] % 17;
    at = std::min(total, at + step);
    out.push_back(at);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const uint8_t flags = data[0], flags2 = data[1];
  const size_t nsizes = data[2] % 8;
  if (size < 3 + nsizes) return 0;
  const uint8_t* sizes = data + 3;
  const std::string output(reinterpret_cast<const char*>(data + 3 + nsizes), size - 3 - nsizes);

  ParserOptions o;
  o.prompt_opened_thinking = o.thinking = flags & 1;
  o.parse_tool_calls = flags & 2;
  if (o.parse_tool_calls) {
    o.tools.push_back({"get_weather", json::object(), false, "function"});
    o.tools.push_back({"apply_patch", json::object(), false, "custom"});  // Responses custom tool
  }
  o.prompt_opened_tool_calls = flags & 4;
  o.json_object = flags & 8;
  if (flags & 16) o.stop_sequences = {"END", "猫猫", "\n\n"};
  o.include_usage = flags & 32;
  const bool tokens = flags & 64;
  o.control_tokens = {128821, 128822, 128825, 1};
  o.request_id = "fz";
  o.created = 1;
  const EngineFinish engine = static_cast<EngineFinish>(flags2 % 5);

  // The parse under one push and under the fuzzer's chunking must agree.
  Fold whole, chunked;
  for (int pass = 0; pass < 2; ++pass) {
    StreamParser p(o);
    std::vector<ParsedEvent> ev;
    const std::vector<size_t> ends = pass == 0 ? std::vector<size_t>{output.size()}
                                               : cuts(sizes, nsizes, output.size());
    size_t from = 0;
    for (size_t end : ends) {
      const std::string_view piece(output.data() + from, end - from);
      if (tokens) {
        // Token input: one id per push, and control ids for their exact texts.
        int32_t id = 1000;
        if (piece == "<think>") id = 128821;
        else if (piece == "</think>") id = 128822;
        else if (piece == "｜DSML｜") id = 128825;
        p.push_tokens(std::span<const int32_t>(&id, 1), piece, &ev);
      } else {
        p.push_text(piece, &ev);
      }
      from = end;
    }
    FinishInfo info = p.finish(engine, &ev);
    Fold& f = pass == 0 ? whole : chunked;
    fold(ev, &f);
    f.finish = finish_reason_name(info.reason);
  }
  if (!tokens) check(whole == chunked, "the parse does not depend on the chunking");

  // Every API: one terminal event at the end, JSON everywhere.
  for (Protocol proto : {Protocol::kChatCompletions, Protocol::kResponses, Protocol::kMessages}) {
    ParserOptions po = o;
    po.protocol = proto;
    OutputParser parser(po);
    std::vector<SseEvent> ev;
    size_t from = 0;
    for (size_t end : cuts(sizes, nsizes, output.size())) {
      OutputChunk c;
      c.text = std::string_view(output.data() + from, end - from);
      parser.push(c, &ev);
      from = end;
    }
    if (flags2 & 0x80) {
      OutputChunk bad;
      bad.finish = OutputFinish::kError;
      bad.error_message = "fuzz failure";
      parser.push(bad, &ev);
    } else {
      parser.finish(&ev);
    }
    check(parser.done(), "the stream ended");
    check(!ev.empty(), "events were emitted");
    size_t terminals = 0;
    for (const SseEvent& e : ev) {
      if (e.data == "[DONE]") {
        check(proto == Protocol::kChatCompletions, "[DONE] only in Chat Completions");
        ++terminals;
        continue;
      }
      json d = json::parse(e.data, nullptr, false);
      check(!d.is_discarded(), "event data is JSON");
      const std::string type = d.is_object() ? d.value("type", std::string()) : std::string();
      if (type == "message_stop" || type == "response.completed" || type == "response.incomplete" ||
          type == "response.failed" || (type == "error" && proto == Protocol::kMessages) ||
          (proto == Protocol::kChatCompletions && d.contains("error")))
        ++terminals;
    }
    check(terminals == 1, "exactly one terminal event");
    const SseEvent& last = ev.back();
    json l = last.data == "[DONE]" ? json("[DONE]") : json::parse(last.data);
    const bool terminal_last =
        last.data == "[DONE]" || (l.is_object() && (l.contains("error") ||
                                  l.value("type", "") == "message_stop" ||
                                  l.value("type", "") == "error" ||
                                  l.value("type", "").rfind("response.", 0) == 0));
    check(terminal_last, "the terminal event is last");
    const std::string body = parser.response().dump(-1, ' ', false, json::error_handler_t::replace);
    check(json::accept(body), "the final body is JSON");
    check(body.find("\xF8") == std::string::npos && body.find("\xF9") == std::string::npos,
          "no internal control bytes leak");
  }
  return 0;
}
