// Responses events. Item ids: "rs_{id}_{k}", "msg_{id}_{k}", "fc_{id}_{k}", "ctc_{id}_{k}" with k
// the output index; call ids "call_{id}_{n}". A tool name "ns::name" is split into namespace and
// name, the inverse of how namespaced tools are flattened for the prompt. A call of a declared
// custom tool (apply_patch) is a custom_tool_call whose input is its `input` argument decoded.
#include "recipe/protocol/responses/events.h"

#include <ctime>

namespace di::recipe {

using json = nlohmann::json;

namespace {

json usage_json(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", u.cached_prompt_tokens}}},
          {"output_tokens", u.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", u.reasoning_tokens}}},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

}  // namespace

ResponsesEvents::ResponsesEvents(ParserOptions options) : EventGenerator(std::move(options)) {
  json tools = json::array();
  for (const ToolSpec& t : options_.tools) {
    if (t.type == "custom") custom_tools_.insert(t.name);
    if (t.type == "custom") tools.push_back({{"type", "custom"}, {"name", t.name}});
    else
      tools.push_back({{"type", "function"}, {"name", t.name}, {"parameters", t.parameters},
                       {"strict", t.strict}});
  }
  response_ = {{"id", "resp_" + options_.request_id},
               {"object", "response"},
               {"created_at", options_.created},
               {"status", "in_progress"},
               {"completed_at", nullptr},
               {"error", nullptr},
               {"incomplete_details", nullptr},
               {"instructions", nullptr},
               {"model", options_.model},
               {"output", json::array()},
               {"parallel_tool_calls", options_.parallel_tool_calls},
               {"tool_choice", "auto"},
               {"tools", std::move(tools)},
               {"usage", nullptr},
               {"metadata", json::object()}};
}

std::string ResponsesEvents::item_id(const char* prefix) const {
  return std::string(prefix) + "_" + options_.request_id + "_" +
         std::to_string(response_["output"].size());
}

void ResponsesEvents::emit(const char* type, json data, std::vector<SseEvent>* out) {
  data["sequence_number"] = sequence_++;
  push_typed_event(type, std::move(data), out);
}

void ResponsesEvents::start(const Usage&, std::vector<SseEvent>* out) {
  emit("response.created", {{"response", response_}}, out);
  emit("response.in_progress", {{"response", response_}}, out);
}

void ResponsesEvents::open_text_item(Item kind, std::vector<SseEvent>* out) {
  close_item("completed", out);
  active_ = kind;
  text_.clear();
  const int64_t index = response_["output"].size();
  json part;
  if (kind == Item::kReasoning) {
    item_ = {{"type", "reasoning"}, {"id", item_id("rs")}, {"status", "in_progress"},
             {"summary", json::array()}, {"content", json::array()}};
    part = {{"type", "reasoning_text"}, {"text", ""}};
  } else {
    // phase: "final_answer" unless a tool call follows the message ("commentary").
    item_ = {{"type", "message"}, {"id", item_id("msg")}, {"status", "in_progress"},
             {"role", "assistant"}, {"phase", "final_answer"}, {"content", json::array()}};
    part = {{"type", "output_text"}, {"annotations", json::array()}, {"logprobs", json::array()},
            {"text", ""}};
  }
  emit("response.output_item.added", {{"output_index", index}, {"item", item_}}, out);
  emit("response.content_part.added",
       {{"item_id", item_["id"]}, {"output_index", index}, {"content_index", 0}, {"part", part}},
       out);
}

void ResponsesEvents::close_item(const char* status, std::vector<SseEvent>* out) {
  if (active_ == Item::kNone) return;
  const int64_t index = response_["output"].size();
  const json id = item_["id"];
  if (active_ == Item::kCustomToolCall) {
    custom_input_delta(custom_input_.finish(), out);
    emit("response.custom_tool_call_input.done",
         {{"item_id", id}, {"output_index", index}, {"input", item_["input"]}}, out);
  } else if (active_ == Item::kFunctionCall) {
    emit("response.function_call_arguments.done",
         {{"item_id", id}, {"output_index", index}, {"name", item_["name"]},
          {"arguments", item_["arguments"]}},
         out);
  } else {
    json part;
    if (active_ == Item::kReasoning) {
      part = {{"type", "reasoning_text"}, {"text", text_}};
      emit("response.reasoning_text.done",
           {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"text", text_}}, out);
    } else {
      part = {{"type", "output_text"}, {"annotations", json::array()}, {"logprobs", json::array()},
              {"text", text_}};
      emit("response.output_text.done",
           {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"text", text_},
            {"logprobs", json::array()}},
           out);
    }
    emit("response.content_part.done",
         {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"part", part}}, out);
    item_["content"] = json::array({part});
  }
  item_["status"] = status;
  emit("response.output_item.done", {{"output_index", index}, {"item", item_}}, out);
  response_["output"].push_back(item_);
  active_ = Item::kNone;
}

void ResponsesEvents::open_call_item(const ParsedEvent& e, std::vector<SseEvent>* out) {
  if (active_ == Item::kMessage) item_["phase"] = "commentary";
  close_item("completed", out);
  const std::string call_id = "call_" + options_.request_id + "_" + std::to_string(e.index);
  if (custom_tools_.count(e.text)) {
    active_ = Item::kCustomToolCall;
    custom_input_ = CustomToolInput();
    item_ = {{"type", "custom_tool_call"}, {"id", item_id("ctc")}, {"status", "in_progress"},
             {"call_id", call_id}, {"name", e.text}, {"input", ""}};
  } else {
    active_ = Item::kFunctionCall;
    std::string name = e.text;
    item_ = {{"type", "function_call"}, {"id", item_id("fc")}, {"status", "in_progress"},
             {"call_id", call_id}};
    if (const size_t sep = name.rfind("::"); sep != std::string::npos && sep > 0) {
      item_["namespace"] = name.substr(0, sep);
      name = name.substr(sep + 2);
    }
    item_["name"] = name;
    item_["arguments"] = "";
  }
  emit("response.output_item.added", {{"output_index", response_["output"].size()}, {"item", item_}},
       out);
}

void ResponsesEvents::custom_input_delta(std::string delta, std::vector<SseEvent>* out) {
  if (delta.empty()) return;
  item_["input"] = item_["input"].get<std::string>() + delta;
  emit("response.custom_tool_call_input.delta",
       {{"item_id", item_["id"]}, {"output_index", response_["output"].size()},
        {"delta", std::move(delta)}},
       out);
}

void ResponsesEvents::append_text(Item kind, const std::string& text, std::vector<SseEvent>* out) {
  if (active_ != kind) open_text_item(kind, out);
  text_ += text;
  json delta = {{"item_id", item_["id"]}, {"output_index", response_["output"].size()},
                {"content_index", 0}, {"delta", text}};
  if (kind == Item::kMessage) delta["logprobs"] = json::array();
  emit(kind == Item::kMessage ? "response.output_text.delta" : "response.reasoning_text.delta",
       std::move(delta), out);
}

void ResponsesEvents::on_event(const ParsedEvent& e, std::vector<SseEvent>* out) {
  const int64_t index = response_["output"].size();
  switch (e.kind) {
    case ParsedEvent::Kind::kReasoning:
      append_text(Item::kReasoning, e.text, out);
      break;
    case ParsedEvent::Kind::kContent:
      append_text(Item::kMessage, e.text, out);
      break;
    case ParsedEvent::Kind::kToolCallStart:
      open_call_item(e, out);
      break;
    case ParsedEvent::Kind::kToolArguments:
      if (active_ == Item::kCustomToolCall) custom_input_delta(custom_input_.push(e.text), out);
      if (active_ != Item::kFunctionCall) break;
      item_["arguments"] = item_["arguments"].get<std::string>() + e.text;
      emit("response.function_call_arguments.delta",
           {{"item_id", item_["id"]}, {"output_index", index}, {"delta", e.text}}, out);
      break;
    case ParsedEvent::Kind::kToolCallEnd:
      close_item("completed", out);
      break;
    case ParsedEvent::Kind::kToolCallCut:
      close_item("incomplete", out);  // the response ends incomplete too (max_output_tokens)
      break;
  }
}

void ResponsesEvents::finish(const FinishInfo& info, std::vector<SseEvent>* out) {
  const bool incomplete =
      info.reason == FinishReason::kLength || info.reason == FinishReason::kContentFilter;
  close_item(incomplete ? "incomplete" : "completed", out);
  response_["status"] = incomplete ? "incomplete" : "completed";
  if (incomplete)
    response_["incomplete_details"] = {
        {"reason", info.reason == FinishReason::kLength ? "max_output_tokens" : "content_filter"}};
  else
    response_["completed_at"] = static_cast<int64_t>(std::time(nullptr));
  response_["usage"] = usage_json(info.usage);
  emit(incomplete ? "response.incomplete" : "response.completed", {{"response", response_}}, out);
}

// A response that fails ends with `response.failed` alone, carrying the error in the response,
// as OpenAI's API does. A separate `error` event (a stream-level failure) would make the official
// SDKs throw instead of handing over the failed response.
void ResponsesEvents::fail(const ApiError& error, std::vector<SseEvent>* out) {
  close_item("incomplete", out);
  const std::string code = error.code.empty() ? "server_error" : error.code;
  response_["status"] = "failed";
  response_["error"] = {{"code", code}, {"message", error.message}};
  emit("response.failed", {{"response", response_}}, out);
}

}  // namespace di::recipe
