// OpenAI Responses output: response.created … response.completed with sequence numbers, output
// items for reasoning, message and function_call, and the final response object folded from the
// same events. Request parsing lives elsewhere in this folder.
#pragma once

#include <string>
#include <vector>

#include "recipe/protocol/event_generator.h"

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
  enum class Item { kNone, kReasoning, kMessage, kFunctionCall };
  void emit(const char* type, nlohmann::json data, std::vector<SseEvent>* out);
  void open_text_item(Item kind, std::vector<SseEvent>* out);
  void close_item(const char* status, std::vector<SseEvent>* out);
  std::string item_id(const char* prefix) const;

  ParserOptions options_;
  nlohmann::json response_;
  int64_t sequence_ = 0;
  Item active_ = Item::kNone;
  nlohmann::json item_;  // the active item as it will appear in output[]
  std::string text_;     // the active text item's text so far
};

}  // namespace di::recipe
