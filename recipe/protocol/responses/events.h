// OpenAI Responses output: response.created … response.completed with sequence numbers, output
// items for reasoning, message, function_call and custom_tool_call, and the final response
// object folded from the same events. Request parsing lives elsewhere in this folder.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "recipe/protocol/event_generator.h"
#include "recipe/protocol/responses/custom_tool_input.h"

namespace di::recipe {

class ResponsesEvents : public EventGenerator {
 public:
  explicit ResponsesEvents(ParserOptions options);
  void start(const Usage& usage, std::vector<SseEvent>* out) override;
  void on_event(const ParsedEvent& e, std::vector<SseEvent>* out) override;
  void finish(const FinishInfo& info, std::vector<SseEvent>* out) override;
  void fail(const ApiError& error, std::vector<SseEvent>* out) override;
  nlohmann::json response() const override { return response_; }

 private:
  enum class Item { kNone, kReasoning, kMessage, kFunctionCall, kCustomToolCall };
  void emit(const char* type, nlohmann::json data, std::vector<SseEvent>* out);
  void open_text_item(Item kind, std::vector<SseEvent>* out);
  void open_call_item(const ParsedEvent& e, std::vector<SseEvent>* out);
  void custom_input_delta(std::string delta, std::vector<SseEvent>* out);
  // Appends reasoning or answer text to its item (opened when another is active) as a delta.
  void append_text(Item kind, const std::string& text, std::vector<SseEvent>* out);
  void close_item(const char* status, std::vector<SseEvent>* out);
  std::string item_id(const char* prefix) const;

  nlohmann::json response_;
  int64_t sequence_ = 0;
  Item active_ = Item::kNone;
  nlohmann::json item_;  // the active item as it will appear in output[]
  std::string text_;     // the active text item's text so far
  std::set<std::string> custom_tools_;  // names of the request's custom tools
  CustomToolInput custom_input_;        // the active custom_tool_call's input decoder
};

}  // namespace di::recipe
