// ParsedEvent: the protocol-neutral vocabulary the output parser speaks — reasoning and answer
// text, tool calls opening / growing / closing, and the finish. Event generators turn these into
// each API's wire events; nothing here knows a wire format.
#pragma once

#include <cstdint>
#include <string>

namespace di::recipe {

// Why the output ended, after parsing (recipe-spec §4.5, §5.5).
enum class FinishReason {
  kStop,           // the model ended its turn (EOS)
  kEndOfStream,    // the input ended without a finish reason
  kStopSequence,   // a stop sequence matched (by the parser or the engine)
  kToolCalls,      // the model ended its turn after calling tools
  kLength,         // max tokens / context reached
  kContentFilter,  // a filter stopped the output
};

const char* finish_reason_name(FinishReason r);  // "stop", "end_of_stream", ...

struct ParsedEvent {
  enum class Kind {
    kReasoning,      // text: reasoning delta
    kContent,        // text: answer delta
    kToolCallStart,  // index, text: the tool's name
    kToolArguments,  // index, text: a piece of the arguments' JSON text
    kToolCallEnd,    // index, text: the complete arguments JSON
    kToolCallCut,    // index, text: the arguments so far; the token limit cut the call, so it
                     // is no call (the API reports the length finish instead)
  };
  Kind kind = Kind::kContent;
  int32_t index = 0;  // tool call index, 0-based in output order
  std::string text;
};

// Token counts for the usage objects. prompt_tokens includes cached_prompt_tokens;
// completion_tokens includes reasoning_tokens (the tokens generated inside the reasoning,
// its closing `</think>` included).
struct Usage {
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;
};

struct FinishInfo {
  FinishReason reason = FinishReason::kEndOfStream;
  std::string stop_sequence;  // the matched stop string (kStopSequence; may be empty)
  Usage usage;
};

}  // namespace di::recipe
