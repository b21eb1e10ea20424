// OutputStateMachine: splits the model's output bytes into stages (answer, reasoning, JSON span,
// DSML tool-call markup, finished) by recognising markers, holding back bytes that may still
// become a marker. Reports unmatched bytes with their stage and each recognised marker; what they
// mean (events, JSON arguments) is StreamParser's business, not this file's.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/marker_matcher.h"
#include "recipe/stream/parser_options.h"  // ToolCallFormat

namespace di::recipe {

enum class Stage {
  kCommon,       // answer text
  kReasoning,    // inside <think>…</think>
  kJson,         // JSON-object mode: inside the JSON span
  kMatchedJson,  // JSON-object mode: after the closing fence
  kBlockOpen,    // after `<｜DSML｜`, checking the block's tag name
  kToolCalls,    // inside the DSML block, between invokes
  kToolName,     // invoke name="…
  kToolArgs,     // inside an invoke, between parameters
  kParamName,    // parameter name="…
  kParamType,    // the rest of the parameter's opening tag
  kParamValue,   // the parameter's value
  kCallBody,     // Hermes: inside `<tool_call>` … `</tool_call>`
  kJsonCalls,    // Llama: the message is tool calls (after `<|python_tag|>` or a leading `{`)
  kFinished,     // after the block or a stop sequence: everything is dropped
};

enum class Marker {
  kThinkStart,       // `<think>` at the very start of the output
  kThinkEnd,         // newlines + `</think>` closing reasoning
  kStrayThinkEnd,    // `</think>` in answer text before any reasoning closed: dropped
  kLeadingNewline,   // a newline at the start of reasoning or answer: dropped
  kStop,             // a stop sequence (stop_index says which)
  kDsmlOpen,         // newlines + `<｜DSML｜`
  kBlockOpened,      // the block's tag name (`tool_calls>` / ` calls>`)
  kBlockOpenFailed,  // `<｜DSML｜` followed by something else: back to text (`from` = that stage)
  kJsonFence,        // "```json\n" or "```\n" opening the JSON span
  kJsonOpen,         // `{` or `[` opening the JSON span (the byte is content)
  kJsonFenceEnd,     // "\n```" closing the JSON span
  kInvoke,           // `invoke name="`
  kBlockEnd,         // `</｜DSML｜tool_calls>` / `</｜DSML｜ calls>`
  kNameEnd,          // `"` after the tool name
  kParamName,        // `parameter name="`
  kParamNameEnd,     // `"` after the parameter name
  kTypeString,       // `true">`
  kTypeJson,         // `false">`
  kTypeAuto,         // `>` closing a parameter tag without string="true|false"
  kValueEnd,         // `</｜DSML｜` ending a value
  kArgsEnd,          // `</｜DSML｜` ending an invoke
  kCallOpen,         // newlines + `<tool_call>` (Hermes)
  kCallClose,        // `</tool_call>`
  kPythonTag,        // `<|python_tag|>` at the start of the output (Llama)
  kCallsJson,        // `{` at the start of the output (Llama; the byte is the call's)
  kEndOfTurn,        // a templated model's end-of-turn text (`<|eot_id|>`, `<|im_end|>`, ...)
};

// The marker texts. Token-id input replaces control tokens by single bytes that never occur in
// UTF-8 (see ControlByte), so a control token and the same text typed as plain tokens differ.
struct MarkerSet {
  std::string think_start = "<think>";
  std::string think_end = "</think>";
  std::string dsml = "｜DSML｜";
};

// Bytes standing for control tokens inside the state machine (0xF8.. never occur in UTF-8).
enum ControlByte : unsigned char { kCtlThinkStart = 0xF8, kCtlThinkEnd = 0xF9, kCtlDsml = 0xFA };

struct StateMachineConfig {
  MarkerSet markers;
  bool parse_tool_calls = false;
  ToolCallFormat tool_format = ToolCallFormat::kDsml;
  std::vector<std::string> end_of_turn;  // texts that end the output (dropped with what follows)
  bool start_in_tool_calls = false;
  bool start_in_reasoning = false;
  bool json_object = false;
  std::vector<std::string> stop_sequences;  // empty strings already removed
};

class OutputStateMachine {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    // Unmatched bytes in `stage`; for kBlockOpenFailed's bytes see on_marker.
    virtual void on_text(Stage stage, std::string_view bytes) = 0;
    // A recognised marker: `bytes` is its matched text; `from` the stage it ended;
    // `stop_index` indexes stop_sequences for kStop.
    virtual void on_marker(Marker marker, Stage from, std::string_view bytes,
                           size_t stop_index) = 0;
  };

  explicit OutputStateMachine(StateMachineConfig config);

  // Feeds bytes; reports everything decided, holds back possible marker prefixes.
  void feed(std::string_view bytes, Sink& sink);
  // End of output: held-back bytes are reported as unmatched text.
  void flush(Sink& sink);

  Stage stage() const { return stage_; }

 private:
  struct Branch {
    MarkerMatcher matcher;
    Marker marker;
    Stage next;
    size_t stop_index = 0;
  };
  void enter(Stage stage, bool leading);
  void add(MarkerMatcher::Kind kind, const std::shared_ptr<const MarkerPattern>& p, Marker marker,
           Stage next, size_t stop_index = 0);
  void feed_byte(uint8_t c, Sink& sink);
  void release(size_t keep, Sink& sink);

  StateMachineConfig config_;
  std::shared_ptr<const MarkerPattern> think_start_, think_end_, dsml_open_, dsml_close_,
      block_v4_, block_v41_, block_end_v4_, block_end_v41_, fence_json_, fence_, brace_,
      bracket_, fence_end_, invoke_, quote_, param_, type_true_, type_false_, type_auto_,
      newline_, call_open_, call_close_, python_tag_;
  std::vector<std::shared_ptr<const MarkerPattern>> stops_, end_of_turn_;
  void add_end_of_turn();

  Stage stage_ = Stage::kCommon;
  Stage block_return_ = Stage::kCommon;  // where a failed `<｜DSML｜` goes back to
  bool at_start_ = true;                 // nothing but leading newlines seen yet
  bool reasoning_closed_ = false;        // `</think>` ended the reasoning
  std::vector<Branch> branches_;
  std::string pending_;                  // bytes not yet reported
};

}  // namespace di::recipe
