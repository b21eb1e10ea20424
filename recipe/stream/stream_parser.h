// StreamParser: the model's output (text, or token ids with their text, in arbitrary chunks) →
// ParsedEvents: reasoning, answer text, tool calls with their arguments turned into JSON on the
// fly, and the finish reason. Owns the input side (UTF-8 carry, control-token identity) and the
// meaning of stages; the marker recognition is OutputStateMachine's. Knows no wire format.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "recipe/stream/json_call_scanner.h"
#include "recipe/stream/output_state_machine.h"
#include "recipe/stream/parsed_event.h"
#include "recipe/stream/parser_options.h"

namespace di::recipe {

// How the engine ended the output (before parsing decides tool_calls / stop_sequence).
enum class EngineFinish { kNone, kStop, kLength, kStopSequence, kContentFilter };

// A token's raw bytes (the tokenizer's decode of that one id, special tokens included), or
// nullopt for an unknown id. Byte-level tokens may hold part of a UTF-8 character.
using TokenDecoder = std::function<std::optional<std::string>(int32_t id)>;

class StreamParser {
 public:
  // With a decoder, push_tokens decodes the ids itself and ignores the text, which makes a
  // control token's position exact however many tokens a push holds.
  explicit StreamParser(const ParserOptions& options, TokenDecoder decoder = {});

  // Raw text. Chunks may split UTF-8 characters and markers anywhere; an incomplete trailing
  // character waits for the next push. Invalid UTF-8 becomes U+FFFD.
  void push_text(std::string_view text, std::vector<ParsedEvent>* out);

  // Token ids and the text they complete. A control token (ParserOptions::control_tokens) counts
  // as its marker; the same text typed as ordinary tokens is plain text. Without a decoder the
  // control token's text is located in `text` in id order (leftmost match after the previous
  // one), which is exact for one token per push; when `text` lacks it (special tokens skipped
  // by the detokenizer) the marker goes after the text located so far.
  void push_tokens(std::span<const int32_t> ids, std::string_view text,
                   std::vector<ParsedEvent>* out);

  // End of output: flushes held-back bytes, closes an unterminated tool call so its arguments
  // are still a JSON object, and decides the finish reason (recipe-spec §4.5).
  FinishInfo finish(EngineFinish engine, std::vector<ParsedEvent>* out);

  // The output is in the reasoning stage now (what the next token belongs to).
  bool in_reasoning() const;
  // Token ids pushed while the output was in reasoning (the closing `</think>` included).
  // Exact with a decoder or one id per push; otherwise an id's stage is the one before the
  // text of its push is parsed, up to the push's next control token.
  int64_t reasoning_tokens() const { return reasoning_tokens_; }

  // A stop sequence matched: the output is over, later input is ignored.
  bool stopped() const { return stopped_; }
  bool finished() const { return finished_; }
  int32_t num_tool_calls() const { return num_tool_calls_; }

 private:
  class Sink;
  friend class Sink;

  void feed_plain(std::string_view text, std::vector<ParsedEvent>* out);
  void feed_control(unsigned char control, std::vector<ParsedEvent>* out);
  void flush_carry(std::vector<ParsedEvent>* out);
  void run(std::string_view bytes, std::vector<ParsedEvent>* out);
  void ensure_machine(bool token_mode);

  // Sink side.
  void on_text(Stage stage, std::string_view bytes, std::vector<ParsedEvent>* out);
  void on_marker(Marker marker, Stage from, std::string_view bytes, size_t stop_index,
                 std::vector<ParsedEvent>* out);
  void emit_text(ParsedEvent::Kind kind, std::string text, std::vector<ParsedEvent>* out);
  void emit_args(std::string piece, std::vector<ParsedEvent>* out);
  void close_value(std::vector<ParsedEvent>* out);
  void close_call(std::vector<ParsedEvent>* out);
  // Ends an open call that the token limit cut: kToolCallCut instead of kToolCallEnd.
  void cut_call(std::vector<ParsedEvent>* out);
  // Reports the open call's end as `kind` (when it had started) and forgets it.
  void end_call(ParsedEvent::Kind kind, std::vector<ParsedEvent>* out);
  // The dense families' calls: the scanner's events numbered and passed on.
  void forward_scanned(std::vector<ParsedEvent>& scanned, std::vector<ParsedEvent>* out);
  void end_scanner(bool cut, std::vector<ParsedEvent>* out);

  ParserOptions options_;
  TokenDecoder decoder_;
  std::optional<OutputStateMachine> machine_;  // built at the first push (text or token mode)
  bool token_mode_ = false;
  MarkerSet token_markers_;
  Utf8Stream carry_;  // an incomplete UTF-8 character at the end of the last push

  bool stopped_ = false;
  bool finished_ = false;
  std::string stop_sequence_;
  bool to_space_run_ = false;   // JSON mode: one space per run of text outside the JSON span
  std::string block_opener_;    // `<｜DSML｜` text held until the block's tag is confirmed

  // The tool call being parsed.
  enum class ValueKind { kString, kJson, kAuto };
  bool call_open_ = false;       // between `invoke name="` and its close
  bool call_started_ = false;    // its start event was emitted (name complete)
  std::string call_name_;
  std::string call_args_;
  int32_t num_params_ = 0;
  ValueKind value_kind_ = ValueKind::kString;
  std::string value_;            // kJson / kAuto values are checked once complete
  int32_t num_tool_calls_ = 0;
  int64_t reasoning_tokens_ = 0;

  // Hermes / Llama calls (ParserOptions::tool_format); null outside a call body.
  std::optional<JsonCallScanner> scanner_;
  std::string call_opener_;        // Hermes: the `<tool_call>` text, content if the body is no call
  bool opener_emitted_ = false;
  bool calls_over_ = false;        // a call was cut: the rest of the output is dropped
};

// Control-token bytes back to the text they stand for ("<think>", ...), for output text.
std::string control_bytes_to_text(std::string_view bytes, const MarkerSet& text_markers);

}  // namespace di::recipe
