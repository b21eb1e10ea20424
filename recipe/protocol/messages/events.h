// Anthropic Messages output: message_start, content blocks (thinking, text, tool_use with
// input_json_delta), message_delta with stop_reason and usage, message_stop; and the final
// message folded from the same events. Request parsing lives elsewhere in this folder.
#pragma once

#include <string>
#include <vector>

#include "recipe/protocol/event_generator.h"

namespace di::recipe {

class MessagesEvents : public EventGenerator {
 public:
  explicit MessagesEvents(ParserOptions options);
  void start(const Usage& usage, std::vector<SseEvent>* out) override;
  void on_event(const ParsedEvent& e, std::vector<SseEvent>* out) override;
  void finish(const FinishInfo& info, std::vector<SseEvent>* out) override;
  void fail(const ApiError& error, std::vector<SseEvent>* out) override;
  nlohmann::json response() const override { return message_; }

 private:
  enum class Block { kNone, kThinking, kText, kToolUse };
  void open_block(Block kind, nlohmann::json start, std::vector<SseEvent>* out);
  // Ends the open block's stream; `keep` = false leaves it out of the final message.
  void close_block(std::vector<SseEvent>* out, bool keep = true);
  // Appends `text` to the active block (opening `kind` with `start` first when another is
  // active) and emits it as a content_block_delta {type: delta_type, key: text}.
  void append_delta(Block kind, const nlohmann::json& start, const char* delta_type,
                    const char* key, const std::string& text, std::vector<SseEvent>* out);

  nlohmann::json message_;
  Block active_ = Block::kNone;
  nlohmann::json block_;     // the active block as it will appear in content[]
  std::string text_;         // its text / thinking / partial JSON so far
};

// "end_turn", "stop_sequence", "tool_use", "max_tokens", "refusal".
const char* messages_stop_reason(FinishReason r);

}  // namespace di::recipe
