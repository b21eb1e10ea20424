// Test helper: loads tests/fixtures/recipe_stream/traces.json cases and replays them through
// StreamParser under any chunking, folding the events into what a client would end up with.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/stream/stream_parser.h"

namespace di::recipe::testing {

using nlohmann::json;

// One push: text only, or token ids with their text.
struct Push {
  std::vector<int32_t> ids;
  std::string text;
};

struct Folded {
  std::string reasoning, content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments text
  std::string finish, stop_sequence;
  std::vector<std::string> content_after_push;
  int cut_calls = 0;  // calls the token limit cut (not in `calls`)
  bool operator==(const Folded& o) const {
    return reasoning == o.reasoning && content == o.content && calls == o.calls &&
           finish == o.finish && stop_sequence == o.stop_sequence;
  }
};

inline json load_cases() {
  std::ifstream f(std::string(DI_FIXTURES_DIR) + "/recipe_stream/traces.json");
  return json::parse(f)["cases"];
}

inline bool is_token_case(const json& c) { return c["chunks"][0].is_array(); }

// The case's chunks as recorded.
inline std::vector<Push> recorded_pushes(const json& c) {
  std::vector<Push> out;
  for (const json& ch : c["chunks"]) {
    if (ch.is_string()) out.push_back({{}, ch.get<std::string>()});
    else out.push_back({{ch[0].get<int32_t>()}, ch[1].get<std::string>()});
  }
  return out;
}

inline EngineFinish engine_finish(const json& c) {
  const json& f = c["engine_finish"];
  if (f.is_null()) return EngineFinish::kNone;
  if (f == "stop") return EngineFinish::kStop;
  if (f == "length") return EngineFinish::kLength;
  if (f == "content_filter") return EngineFinish::kContentFilter;
  return EngineFinish::kStopSequence;
}

inline ParserOptions case_options(const json& c) {
  auto o = parser_options_from_json(c["options"]);
  if (!o.is_ok()) throw std::runtime_error(o.status().message());
  return *o;
}

inline void fold(const std::vector<ParsedEvent>& events, Folded* f) {
  for (const ParsedEvent& e : events) {
    switch (e.kind) {
      case ParsedEvent::Kind::kReasoning: f->reasoning += e.text; break;
      case ParsedEvent::Kind::kContent: f->content += e.text; break;
      case ParsedEvent::Kind::kToolCallStart:
        if (e.index != static_cast<int32_t>(f->calls.size()))
          throw std::runtime_error("tool call index out of order");
        f->calls.push_back({e.text, ""});
        break;
      case ParsedEvent::Kind::kToolArguments: f->calls.at(e.index).second += e.text; break;
      case ParsedEvent::Kind::kToolCallEnd:
        if (f->calls.at(e.index).second != e.text)
          throw std::runtime_error("end arguments differ from the deltas");
        break;
      case ParsedEvent::Kind::kToolCallCut:  // what the client ends up with: no call
        if (e.index + 1 != static_cast<int32_t>(f->calls.size()) || f->calls.back().second != e.text)
          throw std::runtime_error("a cut call that is not the last one, or its deltas differ");
        f->calls.pop_back();
        ++f->cut_calls;
        break;
    }
  }
}

// The case's own id -> text table, standing in for a tokenizer.
inline TokenDecoder case_decoder(const json& c) {
  auto table = std::make_shared<std::map<int32_t, std::string>>();
  for (const json& ch : c["chunks"])
    if (ch.is_array()) (*table)[ch[0].get<int32_t>()] = ch[1].get<std::string>();
  return [table](int32_t id) -> std::optional<std::string> {
    auto it = table->find(id);
    if (it == table->end()) return std::nullopt;
    return it->second;
  };
}

inline Folded replay(const json& c, const std::vector<Push>& pushes, TokenDecoder decoder = {}) {
  StreamParser p(case_options(c), std::move(decoder));
  Folded f;
  std::vector<ParsedEvent> ev;
  for (const Push& push : pushes) {
    ev.clear();
    if (push.ids.empty()) p.push_text(push.text, &ev);
    else p.push_tokens(push.ids, push.text, &ev);
    fold(ev, &f);
    f.content_after_push.push_back(f.content);
  }
  ev.clear();
  FinishInfo info = p.finish(engine_finish(c), &ev);
  fold(ev, &f);
  f.finish = finish_reason_name(info.reason);
  f.stop_sequence = info.stop_sequence;
  return f;
}

// Every chunking to check: the recorded one, one push of everything, every 2-way split (at each
// byte for text, at each token for token input) and one byte / one token per push. Token
// pushes holding several tokens need a decoder to place control tokens exactly.
inline std::vector<std::vector<Push>> chunkings(const json& c) {
  std::vector<std::vector<Push>> out;
  std::vector<Push> rec = recorded_pushes(c);
  out.push_back(rec);
  if (!is_token_case(c)) {
    std::string all;
    for (const Push& p : rec) all += p.text;
    out.push_back({{{}, all}});
    for (size_t i = 1; i < all.size(); ++i)
      out.push_back({{{}, all.substr(0, i)}, {{}, all.substr(i)}});
    std::vector<Push> bytes;
    for (char ch : all) bytes.push_back({{}, std::string(1, ch)});
    out.push_back(bytes);
    // Three-way splits around every pair of positions would be quadratic; every 3-byte stride
    // with each phase covers a marker cut in two places.
    for (size_t phase = 0; phase < 3; ++phase) {
      std::vector<Push> v;
      if (phase) v.push_back({{}, all.substr(0, phase)});
      for (size_t i = phase; i < all.size(); i += 3) v.push_back({{}, all.substr(i, 3)});
      out.push_back(v);
    }
  } else {
    auto merge = [](const std::vector<Push>& ps, size_t b, size_t e) {
      Push m;
      for (size_t i = b; i < e; ++i) {
        m.ids.insert(m.ids.end(), ps[i].ids.begin(), ps[i].ids.end());
        m.text += ps[i].text;
      }
      return m;
    };
    out.push_back({merge(rec, 0, rec.size())});
    for (size_t i = 1; i < rec.size(); ++i)
      out.push_back({merge(rec, 0, i), merge(rec, i, rec.size())});
  }
  return out;
}

}  // namespace di::recipe::testing
