// JsonCallScanner: see json_call_scanner.h. Every byte of a call object updates one structural
// tracker (nesting, strings, escapes), so the object's end is found in whichever path reads it.
#include "recipe/stream/json_call_scanner.h"

#include <nlohmann/json.hpp>

namespace di::recipe {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_args_key(const std::string& k) { return k == "arguments" || k == "parameters"; }

}  // namespace

void JsonCallScanner::emit(ParsedEvent::Kind kind, std::string text, std::vector<ParsedEvent>* out) {
  ParsedEvent e;
  e.kind = kind;
  e.text = std::move(text);
  out->push_back(std::move(e));
}

void JsonCallScanner::feed(std::string_view bytes, std::vector<ParsedEvent>* out) {
  for (char c : bytes) byte(c, out);
  flush(out);
}

void JsonCallScanner::flush(std::vector<ParsedEvent>* out) {
  if (start_pending_) emit(ParsedEvent::Kind::kToolCallStart, name_, out);
  start_pending_ = false;
  if (!args_pending_.empty()) emit(ParsedEvent::Kind::kToolArguments, std::move(args_pending_), out);
  args_pending_.clear();
  if (!text_.empty()) emit(ParsedEvent::Kind::kContent, std::move(text_), out);
  text_.clear();
}

void JsonCallScanner::to_text(std::vector<ParsedEvent>* out) {
  flush(out);
  state_ = State::kText;
  text_ = std::move(raw_);
  raw_.clear();
}

void JsonCallScanner::byte(char c, std::vector<ParsedEvent>* out) {
  bool opening = false;  // the call object's own `{`
  switch (state_) {
    case State::kText:
      text_ += c;
      return;
    case State::kAfter:
    case State::kEnded:
      return;
    case State::kBetween:
      if (is_ws(c) || (several_ && calls_ > 0 && c == ';')) {
        if (calls_ == 0) raw_ += c;  // leading blanks belong to the text if it is no call
        return;
      }
      if (c != '{') {
        raw_ += c;
        to_text(out);
        return;
      }
      state_ = State::kObject;
      opening = true;
      phase_ = Phase::kKeyOpen;
      depth_ = 0;
      in_string_ = escape_ = second_ = started_ = false;
      key_.clear(), name_.clear(), args_.clear();
      break;
    case State::kObject:
      break;
  }
  raw_ += c;
  // The structure first: fast() reads in_string_ and depth_ as they are after this byte.
  if (in_string_) {
    if (escape_) escape_ = false;
    else if (c == '\\') escape_ = true;
    else if (c == '"') in_string_ = false;
  } else if (c == '"') {
    in_string_ = true;
  } else if (c == '{' || c == '[') {
    ++depth_;
  } else if (c == '}' || c == ']') {
    --depth_;
  }
  if (!opening) fast(c);
  if (depth_ <= 0) complete(out);
}

bool JsonCallScanner::punctuation(char c, char want, Phase next) {
  if (is_ws(c)) return true;
  if (c != want) return false;
  phase_ = next;
  return true;
}

bool JsonCallScanner::string_ended(char c, std::string* text) const {
  if (!in_string_) return true;
  *text += c;
  return false;
}

void JsonCallScanner::fast(char c) {
  switch (phase_) {
    case Phase::kKeyOpen:
      if (!punctuation(c, '"', Phase::kKey)) break;
      key_.clear();
      return;
    case Phase::kKey:
      if (c == '\\') break;  // escaped keys are read whole
      if (!string_ended(c, &key_)) return;
      if (second_ ? !is_args_key(key_) : key_ != "name") break;
      phase_ = Phase::kColon;
      return;
    case Phase::kColon:
      if (punctuation(c, ':', Phase::kValue)) return;
      break;
    case Phase::kValue:
      if (is_ws(c)) return;
      if (!second_ && c == '"') {
        phase_ = Phase::kName;
        return;
      }
      if (second_ && c == '{') {
        started_ = start_pending_ = true;
        args_depth_ = depth_;
        args_ = "{";
        args_pending_ = "{";
        phase_ = Phase::kArgs;
        return;
      }
      break;
    case Phase::kName: {
      if (!string_ended(c, &name_)) return;
      // The name as JSON decodes it (escapes included).
      const nlohmann::json n = nlohmann::json::parse("\"" + name_ + "\"", nullptr, false);
      if (n.is_discarded() || !n.is_string() || n.get<std::string>().empty()) break;
      name_ = n.get<std::string>();
      phase_ = Phase::kComma;
      return;
    }
    case Phase::kComma:
      if (!punctuation(c, ',', Phase::kKeyOpen)) break;
      second_ = true;  // early on blanks too: nothing reads it before the key that follows
      return;
    case Phase::kArgs:
      args_ += c;
      args_pending_ += c;
      if (depth_ < args_depth_) phase_ = Phase::kTail;
      return;
    case Phase::kTail:
    case Phase::kHeld:
      return;
  }
  phase_ = Phase::kHeld;  // not in the templates' order: read the object whole when it closes
}

void JsonCallScanner::complete(std::vector<ParsedEvent>* out) {
  bool ok = false;
  if (started_) {
    flush(out);
    if (nlohmann::json::accept(args_)) {
      emit(ParsedEvent::Kind::kToolCallEnd, args_, out);
      ok = true;
    } else {
      emit(ParsedEvent::Kind::kToolCallCut, args_, out);  // streamed, but not JSON: no call
    }
  } else {
    const nlohmann::json j = nlohmann::json::parse(raw_.substr(raw_.find('{')), nullptr, false);
    if (j.is_object() && j.contains("name") && j["name"].is_string() && !j["name"].get<std::string>().empty()) {
      nlohmann::json args = nlohmann::json::object();
      bool args_ok = true;
      int found = 0;
      for (const char* k : {"arguments", "parameters"}) {
        if (!j.contains(k)) continue;
        ++found;
        args = j[k];
        // Some models write the arguments as a JSON string holding the object.
        if (args.is_string()) args = nlohmann::json::parse(args.get<std::string>(), nullptr, false);
        args_ok = args.is_object();
      }
      if (args_ok && found <= 1) {
        emit(ParsedEvent::Kind::kToolCallStart, j["name"].get<std::string>(), out);
        const std::string text = args.dump();
        emit(ParsedEvent::Kind::kToolArguments, text, out);
        emit(ParsedEvent::Kind::kToolCallEnd, text, out);
        ok = true;
      }
    }
    if (!ok) {
      to_text(out);
      return;
    }
  }
  if (ok) ++calls_;
  raw_.clear();
  started_ = false;
  state_ = several_ ? State::kBetween : State::kAfter;
}

void JsonCallScanner::end(bool cut, std::vector<ParsedEvent>* out) {
  if (state_ == State::kEnded) return;
  if (state_ == State::kObject) {
    if (started_) {
      flush(out);
      const bool whole = !cut && phase_ == Phase::kTail && nlohmann::json::accept(args_);
      if (whole) ++calls_;
      emit(whole ? ParsedEvent::Kind::kToolCallEnd : ParsedEvent::Kind::kToolCallCut, args_, out);
    } else if (cut && !several_) {
      raw_.clear();  // a `<tool_call>` body cut before its name: a call attempt, not text
    } else {
      to_text(out);
    }
  }
  flush(out);
  state_ = State::kEnded;
}

}  // namespace di::recipe
