// StreamParser: what each stage's bytes and each marker mean. Tool-call arguments are written as
// JSON while they stream: `{"` key `": ` value … `}`; string values are escaped as they come,
// non-string values are held until complete and checked, so a call that closes always carries a
// JSON object (a value that is not JSON becomes a JSON string instead of corrupting it).
#include "recipe/stream/stream_parser.h"

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace di::recipe {
namespace {

std::string json_escape(std::string_view s) {
  std::string quoted = nlohmann::json(std::string(s)).dump(-1, ' ', false,
                                                           nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kEndOfStream: return "end_of_stream";
    case FinishReason::kStopSequence: return "stop_sequence";
    case FinishReason::kToolCalls: return "tool_calls";
    case FinishReason::kLength: return "length";
    case FinishReason::kContentFilter: return "content_filter";
  }
  return "stop";
}

std::string control_bytes_to_text(std::string_view bytes, const MarkerSet& m) {
  std::string out;
  out.reserve(bytes.size());
  for (char ch : bytes) {
    switch (static_cast<unsigned char>(ch)) {
      case kCtlThinkStart: out += m.think_start; break;
      case kCtlThinkEnd: out += m.think_end; break;
      case kCtlDsml: out += m.dsml; break;
      default: out.push_back(ch);
    }
  }
  return out;
}

class StreamParser::Sink : public OutputStateMachine::Sink {
 public:
  Sink(StreamParser* p, std::vector<ParsedEvent>* out) : p_(p), out_(out) {}
  void on_text(Stage stage, std::string_view bytes) override { p_->on_text(stage, bytes, out_); }
  void on_marker(Marker marker, Stage from, std::string_view bytes, size_t stop) override {
    p_->on_marker(marker, from, bytes, stop, out_);
  }

 private:
  StreamParser* p_;
  std::vector<ParsedEvent>* out_;
};

StreamParser::StreamParser(const ParserOptions& options, TokenDecoder decoder)
    : options_(options), decoder_(std::move(decoder)) {}

void StreamParser::ensure_machine(bool token_mode) {
  if (machine_) return;
  token_mode_ = token_mode;
  StateMachineConfig c;
  const ControlTokenIds& ids = options_.control_tokens;
  if (token_mode) {
    if (ids.think_start >= 0) c.markers.think_start = std::string(1, char(kCtlThinkStart));
    if (ids.think_end >= 0) c.markers.think_end = std::string(1, char(kCtlThinkEnd));
    if (ids.dsml >= 0) c.markers.dsml = std::string(1, char(kCtlDsml));
  }
  token_markers_ = c.markers;
  c.parse_tool_calls = options_.parse_tool_calls;
  c.tool_format = options_.tool_format;
  // A templated model's end of turn, when it arrives as text (an engine stop id it reports, or
  // text handed in): the output is over. DeepSeek's EOS is a control token (control_tokens.eos).
  switch (options_.tool_format) {
    case ToolCallFormat::kLlama3Json:
      c.end_of_turn = {"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"};
      break;
    case ToolCallFormat::kHermes:
      c.end_of_turn = {"<|im_end|>", "<|endoftext|>"};
      break;
    case ToolCallFormat::kNone:
      c.end_of_turn = {"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|im_end|>", "<|endoftext|>"};
      break;
    case ToolCallFormat::kDsml:
      break;
  }
  c.start_in_tool_calls = options_.parse_tool_calls && options_.tool_format == ToolCallFormat::kDsml &&
                          options_.prompt_opened_tool_calls;
  c.start_in_reasoning = options_.prompt_opened_thinking;
  c.json_object = options_.json_object;
  for (const std::string& s : options_.stop_sequences)
    if (!s.empty()) c.stop_sequences.push_back(s);
  machine_.emplace(std::move(c));
}

bool StreamParser::in_reasoning() const {
  if (machine_) return machine_->stage() == Stage::kReasoning;
  return options_.prompt_opened_thinking &&
         !(options_.parse_tool_calls && options_.tool_format == ToolCallFormat::kDsml &&
           options_.prompt_opened_tool_calls);
}

void StreamParser::run(std::string_view bytes, std::vector<ParsedEvent>* out) {
  if (bytes.empty() || stopped_) return;
  Sink sink(this, out);
  machine_->feed(bytes, sink);
}

void StreamParser::feed_plain(std::string_view text, std::vector<ParsedEvent>* out) {
  // Ill-formed UTF-8 becomes U+FFFD per maximal subpart (so control bytes never appear in text),
  // exactly as the tokenizer's decode does.
  run(carry_.push(text), out);
}

void StreamParser::flush_carry(std::vector<ParsedEvent>* out) {
  run(carry_.finish(), out);  // a character cut off by a control token or the end: U+FFFD
}

void StreamParser::feed_control(unsigned char control, std::vector<ParsedEvent>* out) {
  flush_carry(out);
  const char b = static_cast<char>(control);
  run(std::string_view(&b, 1), out);
}

void StreamParser::push_text(std::string_view text, std::vector<ParsedEvent>* out) {
  if (finished_ || stopped_) return;
  if (text.empty()) return;
  ensure_machine(false);
  feed_plain(text, out);
}

void StreamParser::push_tokens(std::span<const int32_t> ids, std::string_view text,
                               std::vector<ParsedEvent>* out) {
  if (finished_ || stopped_) return;
  if (ids.empty() && text.empty()) return;
  ensure_machine(!ids.empty());
  if (!token_mode_) {  // a text-mode parser: the ids carry no extra meaning
    if (in_reasoning()) reasoning_tokens_ += static_cast<int64_t>(ids.size());
    feed_plain(text, out);
    return;
  }
  const ControlTokenIds& ct = options_.control_tokens;
  if (decoder_) {
    for (int32_t id : ids) {
      if (in_reasoning()) ++reasoning_tokens_;
      if (id == ct.eos && id >= 0) continue;
      if (id >= 0 && id == ct.think_start) feed_control(kCtlThinkStart, out);
      else if (id >= 0 && id == ct.think_end) feed_control(kCtlThinkEnd, out);
      else if (id >= 0 && id == ct.dsml) feed_control(kCtlDsml, out);
      else if (std::optional<std::string> bytes = decoder_(id)) feed_plain(*bytes, out);
      if (stopped_) return;
    }
    return;
  }
  const MarkerSet kText;
  size_t cursor = 0;
  for (int32_t id : ids) {
    unsigned char control = 0;
    std::string_view spelled;
    if (in_reasoning()) ++reasoning_tokens_;
    if (id < 0) continue;
    if (id == ct.think_start) control = kCtlThinkStart, spelled = kText.think_start;
    else if (id == ct.think_end) control = kCtlThinkEnd, spelled = kText.think_end;
    else if (id == ct.dsml) control = kCtlDsml, spelled = kText.dsml;
    else if (id == ct.eos) spelled = "<｜end▁of▁sentence｜>";
    else continue;
    size_t at = text.find(spelled, cursor);
    if (at == std::string_view::npos) {
      at = cursor;
      spelled = {};
    }
    feed_plain(text.substr(cursor, at - cursor), out);
    cursor = at + spelled.size();
    if (control != 0) feed_control(control, out);
    if (stopped_) return;
  }
  feed_plain(text.substr(cursor), out);
}

void StreamParser::emit_text(ParsedEvent::Kind kind, std::string text,
                             std::vector<ParsedEvent>* out) {
  if (text.empty()) return;
  ParsedEvent e;
  e.kind = kind;
  e.text = std::move(text);
  out->push_back(std::move(e));
}

void StreamParser::emit_args(std::string piece, std::vector<ParsedEvent>* out) {
  if (piece.empty() || !call_started_) return;
  call_args_ += piece;
  ParsedEvent e;
  e.kind = ParsedEvent::Kind::kToolArguments;
  e.index = num_tool_calls_;
  e.text = std::move(piece);
  out->push_back(std::move(e));
}

void StreamParser::on_text(Stage stage, std::string_view bytes, std::vector<ParsedEvent>* out) {
  if (calls_over_) return;
  const std::string text = control_bytes_to_text(bytes, MarkerSet{});
  const bool json_outside = options_.json_object &&
                            (stage == Stage::kCommon || stage == Stage::kMatchedJson);
  if (!json_outside) to_space_run_ = false;
  switch (stage) {
    case Stage::kCommon:
      if (json_outside) {
        if (!to_space_run_) emit_text(ParsedEvent::Kind::kContent, " ", out);
        to_space_run_ = true;
      } else {
        emit_text(ParsedEvent::Kind::kContent, text, out);
      }
      break;
    case Stage::kMatchedJson:
      if (!to_space_run_) emit_text(ParsedEvent::Kind::kContent, " ", out);
      to_space_run_ = true;
      break;
    case Stage::kJson:
      emit_text(ParsedEvent::Kind::kContent, text, out);
      break;
    case Stage::kReasoning:
      emit_text(ParsedEvent::Kind::kReasoning, text, out);
      break;
    case Stage::kToolName:
      call_name_ += text;
      break;
    case Stage::kParamName:
      emit_args(json_escape(text), out);
      break;
    case Stage::kParamValue:
      if (value_kind_ == ValueKind::kString) emit_args(json_escape(text), out);
      else value_ += text;
      break;
    case Stage::kCallBody:
    case Stage::kJsonCalls:
      if (scanner_) {
        std::vector<ParsedEvent> scanned;
        scanner_->feed(text, &scanned);
        forward_scanned(scanned, out);
      }
      break;
    case Stage::kBlockOpen:
    case Stage::kToolCalls:
    case Stage::kToolArgs:
    case Stage::kParamType:
    case Stage::kFinished:
      break;  // markup between the parts we read, or output after the end: dropped
  }
}

void StreamParser::close_value(std::vector<ParsedEvent>* out) {
  if (value_kind_ == ValueKind::kString) {
    emit_args("\"", out);
    return;
  }
  const std::string_view v = trim(value_);
  if (!v.empty() && nlohmann::json::accept(v)) emit_args(std::string(v), out);
  else emit_args("\"" + json_escape(value_) + "\"", out);  // not JSON: keep it as a string
  value_.clear();
}

void StreamParser::close_call(std::vector<ParsedEvent>* out) {
  emit_args(num_params_ == 0 ? "{}" : "}", out);
  const bool started = call_started_;
  end_call(ParsedEvent::Kind::kToolCallEnd, out);
  if (started) ++num_tool_calls_;
}

void StreamParser::cut_call(std::vector<ParsedEvent>* out) { end_call(ParsedEvent::Kind::kToolCallCut, out); }

void StreamParser::end_call(ParsedEvent::Kind kind, std::vector<ParsedEvent>* out) {
  if (call_started_) {
    ParsedEvent e;
    e.kind = kind;
    e.index = num_tool_calls_;
    e.text = call_args_;
    out->push_back(std::move(e));
  }
  call_open_ = call_started_ = false;
  call_args_.clear();
  call_name_.clear();
}

void StreamParser::forward_scanned(std::vector<ParsedEvent>& scanned, std::vector<ParsedEvent>* out) {
  for (ParsedEvent& e : scanned) {
    if (calls_over_) return;
    e.index = num_tool_calls_;
    switch (e.kind) {
      case ParsedEvent::Kind::kContent:
        // A `<tool_call>` body that is no call: the tags are the model's text too.
        if (!opener_emitted_ && !call_opener_.empty()) emit_text(ParsedEvent::Kind::kContent, call_opener_, out);
        opener_emitted_ = true;
        emit_text(ParsedEvent::Kind::kContent, std::move(e.text), out);
        continue;
      case ParsedEvent::Kind::kToolCallEnd:
        out->push_back(std::move(e));
        ++num_tool_calls_;
        continue;
      case ParsedEvent::Kind::kToolCallCut:
        // The stream already showed this call: it stays the last one (later calls would reuse
        // its index), and the rest of the output is dropped, as after a DSML block.
        calls_over_ = true;
        break;
      default:
        break;
    }
    out->push_back(std::move(e));
  }
}

void StreamParser::end_scanner(bool cut, std::vector<ParsedEvent>* out) {
  if (!scanner_ || calls_over_) return;
  std::vector<ParsedEvent> scanned;
  scanner_->end(cut, &scanned);
  forward_scanned(scanned, out);
  scanner_.reset();
}

void StreamParser::on_marker(Marker marker, Stage from, std::string_view bytes, size_t /*stop_index*/,
                             std::vector<ParsedEvent>* out) {
  to_space_run_ = false;
  if (calls_over_) return;
  switch (marker) {
    case Marker::kCallOpen:
      scanner_.emplace(/*several=*/false);
      call_opener_ = std::string(bytes);
      opener_emitted_ = false;
      break;
    case Marker::kCallClose: {
      const bool text = scanner_ && scanner_->not_a_call();
      end_scanner(false, out);
      if (text) emit_text(ParsedEvent::Kind::kContent, std::string(bytes), out);
      call_opener_.clear();
      break;
    }
    case Marker::kPythonTag:
    case Marker::kCallsJson: {
      scanner_.emplace(/*several=*/true);
      call_opener_.clear();
      if (marker == Marker::kCallsJson) {
        std::vector<ParsedEvent> scanned;
        scanner_->feed(bytes, &scanned);
        forward_scanned(scanned, out);
      }
      break;
    }
    case Marker::kEndOfTurn:
      // The model's own end of turn: a call it left open is malformed, not cut.
      end_scanner(false, out);
      break;
    case Marker::kThinkStart:
    case Marker::kThinkEnd:
    case Marker::kStrayThinkEnd:
    case Marker::kLeadingNewline:
    case Marker::kJsonFence:
    case Marker::kJsonFenceEnd:
    case Marker::kBlockEnd:
      break;
    case Marker::kBlockOpened:
      block_opener_.clear();
      break;
    case Marker::kDsmlOpen:
      block_opener_ = std::string(bytes);
      break;
    case Marker::kBlockOpenFailed: {
      // Not a tool-call block: the opener was ordinary text of the stage it interrupted (`from`).
      const std::string text = std::move(block_opener_);
      block_opener_.clear();
      if (!text.empty()) on_text(from, text, out);
      break;
    }
    case Marker::kJsonOpen:
      emit_text(ParsedEvent::Kind::kContent, std::string(bytes), out);
      break;
    case Marker::kStop:
      stopped_ = true;
      stop_sequence_ = std::string(bytes);
      break;
    case Marker::kInvoke:
      call_open_ = true;
      call_started_ = false;
      call_name_.clear();
      call_args_.clear();
      num_params_ = 0;
      break;
    case Marker::kNameEnd: {
      call_started_ = true;
      ParsedEvent e;
      e.kind = ParsedEvent::Kind::kToolCallStart;
      e.index = num_tool_calls_;
      e.text = call_name_;
      out->push_back(std::move(e));
      break;
    }
    case Marker::kParamName:
      emit_args(num_params_ == 0 ? "{\"" : ", \"", out);
      ++num_params_;
      break;
    case Marker::kParamNameEnd:
      emit_args("\": ", out);
      break;
    case Marker::kTypeString:
      value_kind_ = ValueKind::kString;
      emit_args("\"", out);
      break;
    case Marker::kTypeJson:
      value_kind_ = ValueKind::kJson;
      value_.clear();
      break;
    case Marker::kTypeAuto:
      value_kind_ = ValueKind::kAuto;
      value_.clear();
      break;
    case Marker::kValueEnd:
      close_value(out);
      break;
    case Marker::kArgsEnd:
      close_call(out);
      break;
  }
}

FinishInfo StreamParser::finish(EngineFinish engine, std::vector<ParsedEvent>* out) {
  FinishInfo info;
  if (finished_) return info;
  if (machine_) {
    flush_carry(out);
    Sink sink(this, out);
    if (!stopped_) machine_->flush(sink);
    // A scanned call the token limit cut is no call; other ends read what was written.
    end_scanner(engine == EngineFinish::kLength, out);
    // A call cut by the token limit is not a call: the client learns it was started (the
    // stream already said so) and then that it was cut, never a call the model did not finish.
    if (call_open_ && engine == EngineFinish::kLength) {
      cut_call(out);
    } else if (call_open_) {
      // Any other end inside a call (the model's own end of turn, a cancel) still closes it as
      // a JSON object: malformed markup degrades instead of losing what was written.
      switch (machine_->stage()) {
        case Stage::kToolName:
          on_marker(Marker::kNameEnd, Stage::kToolName, {}, 0, out);
          break;
        case Stage::kParamName:
          emit_args("\": null", out);
          break;
        case Stage::kParamType:
          emit_args("null", out);
          break;
        case Stage::kParamValue:
          close_value(out);
          break;
        default:
          break;
      }
      close_call(out);
    }
  }
  finished_ = true;
  if (stopped_ || engine == EngineFinish::kStopSequence) {
    info.reason = FinishReason::kStopSequence;
    info.stop_sequence = stop_sequence_;
  } else if (engine == EngineFinish::kStop) {
    info.reason = num_tool_calls_ > 0 ? FinishReason::kToolCalls : FinishReason::kStop;
  } else if (engine == EngineFinish::kLength) {
    info.reason = FinishReason::kLength;
  } else if (engine == EngineFinish::kContentFilter) {
    info.reason = FinishReason::kContentFilter;
  } else {
    info.reason = FinishReason::kEndOfStream;
  }
  return info;
}

}  // namespace di::recipe
