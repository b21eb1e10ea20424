// make_event_generator picks the API's generator; to_sse frames an event for the wire.
#include "recipe/protocol/event_generator.h"

#include "recipe/protocol/chat_completions/events.h"
#include "recipe/protocol/messages/events.h"
#include "recipe/protocol/responses/events.h"

namespace di::recipe {

std::string to_sse(const SseEvent& e) {
  std::string s;
  if (!e.name.empty()) s += "event: " + e.name + "\n";
  s += "data: " + e.data + "\n\n";
  return s;
}

void EventGenerator::push_event(std::string name, const nlohmann::json& data,
                                std::vector<SseEvent>* out) {
  out->push_back({std::move(name), data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
}

void EventGenerator::push_typed_event(const char* type, nlohmann::json data,
                                      std::vector<SseEvent>* out) {
  data["type"] = type;
  push_event(type, data, out);
}

std::unique_ptr<EventGenerator> make_event_generator(const ParserOptions& options) {
  switch (options.protocol) {
    case Protocol::kChatCompletions: return std::make_unique<ChatCompletionsEvents>(options);
    case Protocol::kResponses: return std::make_unique<ResponsesEvents>(options);
    case Protocol::kMessages: return std::make_unique<MessagesEvents>(options);
  }
  return std::make_unique<ChatCompletionsEvents>(options);
}

}  // namespace di::recipe
