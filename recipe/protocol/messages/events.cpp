// Messages events. Ids: "msg_{id}", tool_use "toolu_{id}_{n}"; a thinking block's signature is
// the message id (there is no signing key; clients only echo it back). A tool_use block's
// `input` in the final message is its streamed JSON parsed, or {} if it does not parse.
#include "recipe/protocol/messages/events.h"

namespace di::recipe {

using json = nlohmann::json;

const char* messages_stop_reason(FinishReason r) {
  switch (r) {
    case FinishReason::kStopSequence: return "stop_sequence";
    case FinishReason::kToolCalls: return "tool_use";
    case FinishReason::kLength: return "max_tokens";
    case FinishReason::kContentFilter: return "refusal";
    default: return "end_turn";
  }
}

namespace {

json usage_json(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens - u.cached_prompt_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", u.cached_prompt_tokens},
          {"output_tokens", u.completion_tokens}};
}

}  // namespace

MessagesEvents::MessagesEvents(ParserOptions options) : EventGenerator(std::move(options)) {
  message_ = {{"id", "msg_" + options_.request_id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", options_.model},
              {"content", json::array()},
              {"stop_reason", nullptr},
              {"stop_sequence", nullptr},
              {"usage", usage_json({})}};
}

void MessagesEvents::start(const Usage& usage, std::vector<SseEvent>* out) {
  message_["usage"] = usage_json(usage);
  json m = message_;
  m["usage"]["service_tier"] = "standard";
  push_typed_event("message_start", {{"message", m}}, out);
  push_typed_event("ping", json::object(), out);
}

void MessagesEvents::open_block(Block kind, json start, std::vector<SseEvent>* out) {
  close_block(out);
  active_ = kind;
  text_.clear();
  block_ = start;
  push_typed_event("content_block_start",
       {{"index", message_["content"].size()}, {"content_block", std::move(start)}}, out);
}

void MessagesEvents::close_block(std::vector<SseEvent>* out, bool keep) {
  if (active_ == Block::kNone) return;
  const size_t index = message_["content"].size();
  switch (active_) {
    case Block::kThinking:
      push_typed_event("content_block_delta",
           {{"index", index},
            {"delta", {{"type", "signature_delta"}, {"signature", message_["id"]}}}},
           out);
      block_["thinking"] = text_;
      block_["signature"] = message_["id"];
      break;
    case Block::kText:
      block_["text"] = text_;
      break;
    case Block::kToolUse: {
      json input = json::parse(text_, nullptr, /*allow_exceptions=*/false);
      block_["input"] = input.is_object() ? input : json::object();
      break;
    }
    case Block::kNone:
      break;
  }
  push_typed_event("content_block_stop", {{"index", index}}, out);
  if (keep) message_["content"].push_back(block_);  // a cut call is the last block: no index reuse
  active_ = Block::kNone;
}

void MessagesEvents::append_delta(Block kind, const json& start, const char* delta_type,
                                  const char* key, const std::string& text,
                                  std::vector<SseEvent>* out) {
  if (active_ != kind) open_block(kind, start, out);
  text_ += text;
  push_typed_event("content_block_delta",
       {{"index", message_["content"].size()}, {"delta", {{"type", delta_type}, {key, text}}}},
       out);
}

void MessagesEvents::on_event(const ParsedEvent& e, std::vector<SseEvent>* out) {
  switch (e.kind) {
    case ParsedEvent::Kind::kReasoning:
      append_delta(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}},
                   "thinking_delta", "thinking", e.text, out);
      break;
    case ParsedEvent::Kind::kContent:
      append_delta(Block::kText, {{"type", "text"}, {"text", ""}}, "text_delta", "text", e.text, out);
      break;
    case ParsedEvent::Kind::kToolCallStart:
      open_block(Block::kToolUse,
                 {{"type", "tool_use"},
                  {"id", "toolu_" + options_.request_id + "_" + std::to_string(e.index)},
                  {"name", e.text},
                  {"input", json::object()}},
                 out);
      break;
    case ParsedEvent::Kind::kToolArguments:
      if (active_ != Block::kToolUse) break;
      append_delta(Block::kToolUse, {}, "input_json_delta", "partial_json", e.text, out);
      break;
    case ParsedEvent::Kind::kToolCallEnd:
      close_block(out);
      break;
    case ParsedEvent::Kind::kToolCallCut:
      // The stream already opened the tool_use block, so it is closed there; the message keeps
      // no tool_use the model did not finish (stop_reason "max_tokens" says why).
      close_block(out, /*keep=*/false);
      break;
  }
}

void MessagesEvents::finish(const FinishInfo& info, std::vector<SseEvent>* out) {
  close_block(out);
  message_["stop_reason"] = messages_stop_reason(info.reason);
  if (info.reason == FinishReason::kStopSequence && !info.stop_sequence.empty())
    message_["stop_sequence"] = info.stop_sequence;
  message_["usage"] = usage_json(info.usage);
  push_typed_event("message_delta",
       {{"delta", {{"stop_reason", message_["stop_reason"]},
                   {"stop_sequence", message_["stop_sequence"]}}},
        {"usage", message_["usage"]}},
       out);
  push_typed_event("message_stop", json::object(), out);
}

void MessagesEvents::fail(const ApiError& error, std::vector<SseEvent>* out) {
  push_typed_event("error", {{"error", error.body()["error"]}}, out);
}

}  // namespace di::recipe
