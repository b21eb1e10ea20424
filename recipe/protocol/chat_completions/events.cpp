// Chat Completions chunks. Delta shapes follow the DeepSeek API (reasoning_content beside
// content); ids are "chatcmpl-{id}" and "call_{id}_{n}".
#include "recipe/protocol/chat_completions/events.h"

namespace di::recipe {

using json = nlohmann::json;

const char* chat_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::kToolCalls: return "tool_calls";
    case FinishReason::kLength: return "length";
    case FinishReason::kContentFilter: return "content_filter";
    default: return "stop";
  }
}

json chat_usage(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_prompt_tokens}}},
          {"completion_tokens_details", {{"reasoning_tokens", u.reasoning_tokens}}},
          {"prompt_cache_hit_tokens", u.cached_prompt_tokens},
          {"prompt_cache_miss_tokens", u.prompt_tokens - u.cached_prompt_tokens}};
}

ChatCompletionsEvents::ChatCompletionsEvents(ParserOptions options)
    : EventGenerator(std::move(options)), id_("chatcmpl-" + options_.request_id) {}

json ChatCompletionsEvents::envelope(const char* object, json choice) const {
  return {{"id", id_},
          {"object", object},
          {"created", options_.created},
          {"model", options_.model},
          {"system_fingerprint", options_.system_fingerprint.empty() ? json(nullptr) : json(options_.system_fingerprint)},
          {"choices", json::array({std::move(choice)})}};
}

json ChatCompletionsEvents::chunk(json delta, json finish_reason) const {
  json c = envelope("chat.completion.chunk", {{"index", 0},
                                              {"delta", std::move(delta)},
                                              {"logprobs", nullptr},
                                              {"finish_reason", std::move(finish_reason)}});
  if (options_.include_usage) c["usage"] = nullptr;
  return c;
}

void ChatCompletionsEvents::emit(json data, std::vector<SseEvent>* out) {
  if (!pending_logprobs_.empty() && data.contains("choices") && !data["choices"].empty()) {
    data["choices"][0]["logprobs"] = {{"content", std::move(pending_logprobs_)}};
    pending_logprobs_ = json::array();
  }
  push_event("", data, out);
}

void ChatCompletionsEvents::on_logprobs(json entries) {
  // Every generated token is listed, reasoning and tool markup included: the engine's tokens
  // are not split by what the parser makes of them.
  has_logprobs_ = true;
  for (json& e : entries) {
    logprobs_.push_back(e);
    pending_logprobs_.push_back(std::move(e));
  }
}

void ChatCompletionsEvents::start(const Usage&, std::vector<SseEvent>* out) {
  json delta = {{"role", "assistant"}, {"content", ""}};
  if (options_.thinking) delta = {{"role", "assistant"}, {"content", nullptr}, {"reasoning_content", ""}};
  emit(chunk(std::move(delta)), out);
}

void ChatCompletionsEvents::on_event(const ParsedEvent& e, std::vector<SseEvent>* out) {
  switch (e.kind) {
    case ParsedEvent::Kind::kReasoning:
      reasoning_ += e.text;
      has_reasoning_ = true;
      emit(chunk({{"content", nullptr}, {"reasoning_content", e.text}}), out);
      break;
    case ParsedEvent::Kind::kContent: {
      content_ += e.text;
      has_content_ = true;
      json delta = {{"content", e.text}};
      if (options_.thinking) delta["reasoning_content"] = nullptr;
      emit(chunk(std::move(delta)), out);
      break;
    }
    case ParsedEvent::Kind::kToolCallStart: {
      const std::string call_id = "call_" + options_.request_id + "_" + std::to_string(e.index);
      tool_calls_.push_back({{"id", call_id},
                             {"type", "function"},
                             {"function", {{"name", e.text}, {"arguments", ""}}}});
      emit(chunk({{"tool_calls", json::array({{{"index", e.index},
                                               {"id", call_id},
                                               {"type", "function"},
                                               {"function", {{"name", e.text}, {"arguments", ""}}}}})}}),
           out);
      break;
    }
    case ParsedEvent::Kind::kToolArguments: {
      json& args = tool_calls_.at(e.index)["function"]["arguments"];
      args = args.get<std::string>() + e.text;
      emit(chunk({{"tool_calls",
                   json::array({{{"index", e.index}, {"function", {{"arguments", e.text}}}}})}}),
           out);
      break;
    }
    case ParsedEvent::Kind::kToolCallEnd:
      break;
    case ParsedEvent::Kind::kToolCallCut:
      // The streamed deltas already went out (OpenAI streams a cut call the same way, then
      // finish_reason "length"); the message itself must not carry a call the model never made.
      if (!tool_calls_.empty()) tool_calls_.erase(tool_calls_.size() - 1);
      break;
  }
}

void ChatCompletionsEvents::finish(const FinishInfo& info, std::vector<SseEvent>* out) {
  finish_reason_ = chat_finish_reason(info.reason);
  usage_ = chat_usage(info.usage);
  emit(chunk(json::object(), finish_reason_), out);
  if (options_.include_usage) {
    json last = chunk(json::object());
    last["choices"] = json::array();
    last["usage"] = usage_;
    emit(std::move(last), out);
  }
  out->push_back({"", "[DONE]"});
}

void ChatCompletionsEvents::fail(const ApiError& error, std::vector<SseEvent>* out) {
  emit(error.body(), out);
}

json ChatCompletionsEvents::response() const {
  json message = {{"role", "assistant"}, {"content", has_content_ ? json(content_) : json(nullptr)}};
  if (has_reasoning_) message["reasoning_content"] = reasoning_;
  if (!tool_calls_.empty()) message["tool_calls"] = tool_calls_;
  json body = envelope("chat.completion", {{"index", 0},
                                           {"message", std::move(message)},
                                           {"logprobs", has_logprobs_ ? json{{"content", logprobs_}} : json(nullptr)},
                                           {"finish_reason", finish_reason_}});
  body["usage"] = usage_;
  return body;
}

}  // namespace di::recipe
