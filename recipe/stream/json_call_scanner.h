// JsonCallScanner: the dense families' tool calls — a JSON object {"name": ..., "arguments": {...}}
// (Qwen's Hermes form) or {"name": ..., "parameters": {...}} (Llama-3.1/3.2) per call — read as
// the bytes stream in. In the order the templates write them (name, then the arguments object)
// the call starts as soon as its name is complete and the arguments stream as the model writes
// them; in any other order the object is held until it closes and then read whole. Text that
// turns out not to be a call comes back as content. Emits ParsedEvents with index 0: the caller
// numbers the calls.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/stream/parsed_event.h"

namespace di::recipe {

class JsonCallScanner {
 public:
  // `several`: calls follow each other separated by `;` (Llama's message form); otherwise the
  // body holds one call and what follows it is dropped (Hermes).
  explicit JsonCallScanner(bool several) : several_(several) {}

  void feed(std::string_view bytes, std::vector<ParsedEvent>* out);
  // The body ended: at its closing tag or the output's end; `cut`: the token limit ended it.
  // An unfinished call that had started is cut (kToolCallCut: not a call); one that had not is
  // content, except a Hermes body cut by the limit (dropped: `<tool_call>` said it was a call).
  void end(bool cut, std::vector<ParsedEvent>* out);

  // The text is not a call: everything fed from now on is content.
  bool not_a_call() const { return state_ == State::kText; }

 private:
  enum class State { kBetween, kObject, kText, kAfter, kEnded };
  // Where the fast path is inside {"name": "...", "arguments": {...}}.
  enum class Phase { kKeyOpen, kKey, kColon, kValue, kName, kComma, kArgs, kTail, kHeld };

  void byte(char c, std::vector<ParsedEvent>* out);
  void fast(char c);
  // Between two tokens of the fast path: a blank keeps the phase, `want` moves on to `next`;
  // false for any other byte.
  bool punctuation(char c, char want, Phase next);
  // Inside a string token: appends c to *text and returns false, or true once the structural
  // tracker has seen the closing quote (which is not appended).
  bool string_ended(char c, std::string* text) const;
  void complete(std::vector<ParsedEvent>* out);
  void to_text(std::vector<ParsedEvent>* out);
  void flush(std::vector<ParsedEvent>* out);
  void emit(ParsedEvent::Kind kind, std::string text, std::vector<ParsedEvent>* out);

  bool several_;
  State state_ = State::kBetween;
  Phase phase_ = Phase::kKeyOpen;
  int32_t calls_ = 0;      // calls completed
  std::string raw_;        // the current candidate's bytes, for content or a whole read
  std::string text_;       // content waiting for the end of this feed
  int32_t depth_ = 0;      // JSON nesting of the call object (1 = its own level)
  bool in_string_ = false, escape_ = false;
  bool second_ = false;    // the fast path is at the second key
  std::string key_, name_;
  bool started_ = false;   // kToolCallStart went out (or waits in start_pending_ for the flush)
  bool start_pending_ = false;
  int32_t args_depth_ = 0;
  std::string args_, args_pending_;
};

}  // namespace di::recipe
