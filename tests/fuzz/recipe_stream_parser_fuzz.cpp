// libFuzzer target for the output side of the recipe: random and mutated model output (text or
// token ids) through StreamParser and OutputParser for each API. Checks the invariants the parser
// promises rather than exact output: no crash or hang, every stream well-formed per its API
// (tests/recipe_stream/event_checks.h: order, indexes, sequence numbers, one terminal event
// last), all event data and the body JSON, no internal control byte leaking, the streamed view
// equal to the final body, every closed tool call's arguments a JSON object, and the same events
// and body however the output is chunked.
//
// Input: 4 header bytes (options, finish, chunking seed, token mode), then the output. Bytes
// 0xF8..0xFF of the output stand for whole markers, so random mutation reaches the DSML and
// thinking paths; other invalid UTF-8 stays as it is.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/protocol/output_parser.h"
#include "tests/recipe_stream/event_checks.h"

namespace {

using namespace di::recipe;
using di::recipe::testing::ClientView;
using nlohmann::json;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "output fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

constexpr int32_t kThinkStart = 128821, kThinkEnd = 128822, kDsml = 128825, kEos = 1;
constexpr int32_t kByteBase = 1000;  // token kByteBase + b is the single byte b

const char* const kMarkers[8] = {
    "<think>", "</think>", "\n\n<｜DSML｜ calls>\n", "<｜DSML｜ invoke name=\"",
    "\n<｜DSML｜ parameter name=\"", "\" string=\"true\">", "\" string=\"false\">", "</｜DSML｜"};

struct Token {
  int32_t id;
  std::string text;
};

// The output's tokens: control tokens where the mask asks for them, single bytes otherwise.
std::vector<Token> tokenize(const std::string& text, uint8_t mask) {
  struct Control {
    std::string_view s;
    int32_t id;
    uint8_t bit;
  };
  static const Control kControls[] = {{"<think>", kThinkStart, 1},
                                      {"</think>", kThinkEnd, 2},
                                      {"｜DSML｜", kDsml, 4},
                                      {"<｜end▁of▁sentence｜>", kEos, 8}};
  std::vector<Token> out;
  for (size_t i = 0; i < text.size();) {
    bool hit = false;
    for (const Control& c : kControls) {
      if ((mask & c.bit) && text.compare(i, c.s.size(), c.s) == 0) {
        out.push_back({c.id, std::string(c.s)});
        i += c.s.size();
        hit = true;
        break;
      }
    }
    if (hit) continue;
    out.push_back({kByteBase + static_cast<unsigned char>(text[i]), std::string(1, text[i])});
    ++i;
  }
  return out;
}

std::optional<std::string> decode(int32_t id) {
  switch (id) {
    case kThinkStart: return std::string("<think>");
    case kThinkEnd: return std::string("</think>");
    case kDsml: return std::string("｜DSML｜");
    case kEos: return std::string("<｜end▁of▁sentence｜>");
  }
  if (id >= kByteBase && id < kByteBase + 256) return std::string(1, static_cast<char>(id - kByteBase));
  return std::nullopt;
}

struct Run {
  std::vector<SseEvent> events;
  json body;
  bool failed = false;
  bool length = false;  // ended by the token limit
};

// Feeds the output in pieces of `sizes` (bytes, or tokens in token mode; the last piece takes
// the rest) and ends it with `finish`.
Run run(const ParserOptions& o, bool tokens, bool no_decoder, const std::string& text,
        const std::vector<Token>& toks, const std::vector<size_t>& sizes, OutputFinish finish) {
  OutputParser parser(o, tokens && !no_decoder ? TokenDecoder(decode) : TokenDecoder());
  Run r;
  const size_t total = tokens ? toks.size() : text.size();
  size_t at = 0;
  for (size_t k = 0; at < total; ++k) {
    const size_t n = k < sizes.size() ? std::min(sizes[k], total - at) : total - at;
    OutputChunk chunk;
    std::vector<int32_t> ids;
    std::string piece;
    if (tokens) {
      for (size_t i = at; i < at + n; ++i) {
        ids.push_back(toks[i].id);
        piece += toks[i].text;
      }
      chunk.token_ids = ids;
      chunk.text = piece;
    } else {
      chunk.text = std::string_view(text).substr(at, n);
    }
    chunk.prompt_tokens = 20;
    chunk.cached_prompt_tokens = 4;
    parser.push(chunk, &r.events);
    at += n;
  }
  if (finish == OutputFinish::kNone) {
    parser.finish(&r.events);
  } else {
    OutputChunk last;
    last.finish = finish;
    last.error_message = "fuzz: engine failure";
    parser.push(last, &r.events);
  }
  if (!parser.done()) finding("parser not done after the end of output");
  r.failed = parser.failed();
  r.length = finish == OutputFinish::kLength;
  r.body = parser.response();
  return r;
}

void check_run(const ParserOptions& o, const Run& r, ClientView* view) {
  std::string problem;
  try {
    problem = di::recipe::testing::check_events(o.protocol, r.events, o.include_usage, view);
  } catch (const std::exception& e) {
    problem = std::string("event shape: ") + e.what();
  }
  if (!problem.empty()) finding(problem);
  for (const SseEvent& e : r.events) {
    if (e.data != "[DONE]" && json::parse(e.data, nullptr, false).is_discarded())
      finding("event data is not JSON: " + e.data);
    // The parser marks control tokens with bytes no UTF-8 text holds; none may reach a client.
    if (e.data.find_first_of("\xF8\xF9") != std::string::npos) finding("internal control byte leaked");
  }
  if (r.failed) return;
  ClientView body;
  try {
    body = di::recipe::testing::view_of_response(o.protocol, r.body);
  } catch (const std::exception& e) {
    finding(std::string("response shape: ") + e.what());
  }
  ClientView streamed = *view;
  // A call the token limit cut went out in the stream but is not in a Chat or Messages body; so
  // does a malformed one in the dense formats (always the last: the output ends there).
  const bool may_cut = r.length || (o.parse_tool_calls && o.tool_format != ToolCallFormat::kDsml);
  if (may_cut && o.protocol != Protocol::kResponses && streamed.calls.size() == body.calls.size() + 1)
    streamed.calls.pop_back();
  if (o.protocol == Protocol::kMessages) {
    // The body's tool_use input is parsed JSON; compare the calls as JSON.
    if (streamed.calls.size() != body.calls.size()) finding("messages: tool call count");
    for (size_t i = 0; i < body.calls.size(); ++i) {
      if (json::parse(streamed.calls[i].second, nullptr, false) != json::parse(body.calls[i].second))
        finding("messages: tool_use input differs from its input_json_delta stream");
      streamed.calls[i].second = body.calls[i].second;
    }
  }
  if (!(streamed == body)) finding("streamed view differs from the final response");
}

json comparable_body(json b, bool tokens) {
  if (b.is_object()) {
    b.erase("completed_at");
    if (tokens) b.erase("usage");  // usage counts ids per push
  }
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4 || size > 4096) return 0;
  const uint8_t b0 = data[0], b1 = data[1], b2 = data[2], b3 = data[3];

  ParserOptions o;
  o.protocol = static_cast<Protocol>(b0 % 3);
  o.prompt_opened_thinking = o.thinking = (b0 & 0x04) != 0;
  o.parse_tool_calls = (b0 & 0x08) != 0;
  o.prompt_opened_tool_calls = o.parse_tool_calls && (b0 & 0x10) != 0;
  o.json_object = (b0 & 0x20) != 0;
  o.include_usage = o.protocol == Protocol::kChatCompletions && (b0 & 0x40) != 0;
  const bool tokens = (b0 & 0x80) != 0;
  o.stream = true;
  o.model = "fuzz-model";
  o.request_id = "fz";
  o.created = 1700000000;
  o.encoding = (b1 & 0x80) ? EncodingVersion::kDsv4 : EncodingVersion::kDsv41;
  // The dense families' formats too (the header's spare bits), seeded with their markup.
  static const ToolCallFormat kFormats[4] = {ToolCallFormat::kDsml, ToolCallFormat::kHermes,
                                             ToolCallFormat::kLlama3Json, ToolCallFormat::kNone};
  o.tool_format = kFormats[(b3 >> 4) & 3];
  if (o.tool_format != ToolCallFormat::kDsml) o.prompt_opened_tool_calls = false;
  if (o.parse_tool_calls) {
    ToolSpec f;
    f.name = "get_weather";
    o.tools.push_back(f);
    if (b1 & 0x40) {
      ToolSpec c;
      c.name = "apply_patch";
      c.type = "custom";
      o.tools.push_back(c);
    }
  }
  static const std::vector<std::string> kStops[4] = {{}, {"END"}, {"猫猫", "STOP", "###"}, {"", "\n\n", "</"}};
  o.stop_sequences = kStops[(b1 >> 3) & 3];
  if (tokens) o.control_tokens = {kThinkStart, kThinkEnd, kDsml, kEos};
  static const OutputFinish kFinish[8] = {OutputFinish::kNone,   OutputFinish::kStop,
                                          OutputFinish::kStop,   OutputFinish::kLength,
                                          OutputFinish::kContentFilter, OutputFinish::kError,
                                          OutputFinish::kCancelled, OutputFinish::kStopSequence};
  const OutputFinish finish = kFinish[b1 & 7];

  std::string text;
  for (size_t i = 4; i < size; ++i) {
    if (data[i] >= 0xF8) text += kMarkers[data[i] - 0xF8];
    else text.push_back(static_cast<char>(data[i]));
  }
  const std::vector<Token> toks = tokens ? tokenize(text, b3) : std::vector<Token>();
  // Token input without a decoder: ids with the text they complete, one token per push (the
  // engine's way); the control token's text is then located in the push's text.
  const bool no_decoder = tokens && (b3 & 0x80) != 0;

  // The parser alone: every call it closes has a JSON object as arguments, and the arguments
  // deltas add up to it.
  {
    di::recipe::StreamParser sp(o, tokens && !no_decoder ? TokenDecoder(decode) : TokenDecoder());
    std::vector<ParsedEvent> ev;
    if (no_decoder) {
      for (const Token& t : toks) sp.push_tokens(std::span<const int32_t>(&t.id, 1), t.text, &ev);
    } else if (tokens) {
      std::vector<int32_t> ids;
      for (const Token& t : toks) ids.push_back(t.id);
      sp.push_tokens(ids, text, &ev);
    } else {
      sp.push_text(text, &ev);
    }
    sp.finish(EngineFinish::kStop, &ev);
    std::vector<std::string> args;
    for (const ParsedEvent& e : ev) {
      if (e.kind == ParsedEvent::Kind::kToolCallStart) {
        if (e.index != static_cast<int32_t>(args.size())) finding("tool call index out of order");
        args.emplace_back();
      } else if (e.kind == ParsedEvent::Kind::kToolArguments) {
        if (e.index + 1 != static_cast<int32_t>(args.size())) finding("arguments for a closed call");
        args.back() += e.text;
      } else if (e.kind == ParsedEvent::Kind::kToolCallEnd) {
        if (e.index + 1 != static_cast<int32_t>(args.size()) || args.back() != e.text)
          finding("call end differs from its argument deltas");
        json a = json::parse(e.text, nullptr, false);
        if (a.is_discarded() || !a.is_object()) finding("closed call arguments not a JSON object: " + e.text);
      }
    }
  }

  // Whole output in one push, then in the pieces the seed picks: both well-formed, and the same.
  std::mt19937 rng(b2 * 2654435761u + static_cast<uint32_t>(size));
  std::vector<size_t> sizes;
  const size_t total = tokens ? toks.size() : text.size();
  for (size_t at = 0; at < total;) {
    const size_t n = no_decoder ? 1 : 1 + rng() % (b2 & 1 ? 3 : 12);
    sizes.push_back(n);
    at += n;
  }
  const Run split = run(o, tokens, no_decoder, text, toks, sizes, finish);
  ClientView vs;
  check_run(o, split, &vs);
  if (no_decoder) return 0;  // one push of many ids locates control texts only approximately
  const Run whole = run(o, tokens, no_decoder, text, toks, {}, finish);
  ClientView vw;
  check_run(o, whole, &vw);
  if (comparable_body(whole.body, tokens) != comparable_body(split.body, tokens))
    finding("final response depends on chunking:\n" + whole.body.dump() + "\n" + split.body.dump());
  if (!tokens && json(di::recipe::testing::normalized(whole.events)) !=
                     json(di::recipe::testing::normalized(split.events)))
    finding("events depend on chunking");
  return 0;
}
