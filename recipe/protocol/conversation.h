// Conversation + InferenceOptions: what every request protocol is normalized into before a
// prompt is rendered. Plain data; the request parsers fill it, recipe/encoding renders it.
// It must not hold protocol-specific wire shapes (those stay in protocol/<api>/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "request/sampling_fields.h"

namespace di::recipe {

using ordered_json = nlohmann::ordered_json;

// An image reference as the request gave it. Resolving (fetching, decoding, counting tokens) is
// recipe/image/'s job; the parsers only collect these, in placeholder order.
struct ImageRef {
  enum class Kind { kUrl, kDataUrl, kBase64 };
  Kind kind = Kind::kUrl;
  std::string url;         // kUrl: the http(s) URL; kDataUrl: the whole "data:..." URL
  std::string data;        // kBase64: the base64 payload
  std::string media_type;  // kBase64 (and parsed from a data URL): "image/png", ...
  std::string detail;      // "low" | "high" | "auto" | "original"; "" = not given
};

// One piece of message content. Text pieces of one message are rendered joined with "\n\n"
// by the converters before they reach here, except where images interleave.
struct ContentPart {
  enum class Kind { kText, kImage };
  Kind kind = Kind::kText;
  std::string text;  // kText
  ImageRef image;    // kImage
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text as the client sent it (an object, normally)
};

enum class Role { kSystem, kDeveloper, kUser, kAssistant, kTool, kLatestReminder };

struct Message {
  Role role = Role::kUser;
  std::vector<ContentPart> content;
  // Assistant only: null = none given; "" = given empty.
  std::optional<std::string> reasoning_content;
  std::vector<ToolCall> tool_calls;  // assistant only
  std::string tool_call_id;          // tool only
};

// A function tool as the model sees it. Responses namespaces arrive flattened
// ("ns::name"); the apply_patch custom tool arrives as a function with one string "input".
struct ToolDefinition {
  std::string name;
  std::optional<std::string> description;
  ordered_json parameters = ordered_json::object();  // JSON Schema, key order kept
  bool has_parameters = false;  // false: the request gave none (rendered without the key)
  std::optional<bool> strict;
  bool custom = false;  // a Responses custom tool (apply_patch): its calls carry raw input
};

enum class ToolChoiceMode { kNone, kAuto, kRequired };

// Effort levels in DeepSeek's reference-encoder vocabulary. Protocols map onto these:
// minimal|low → kLow, medium|high → kHigh, xhigh → kXhigh, max|ultra → kMax.
enum class ReasoningEffort { kLow, kHigh, kXhigh, kMax };

// What the output must look like; the engine turns kJsonSchema/kJsonObject into a grammar.
struct ResponseFormat {
  enum class Type { kText, kJsonObject, kJsonSchema };
  Type type = Type::kText;
  std::string name;                               // json_schema: its name
  ordered_json schema = ordered_json::object();   // json_schema: the schema
  bool strict = false;                            // json_schema: strict flag
};

struct Conversation {
  std::vector<Message> messages;
  std::vector<ToolDefinition> tools;  // after tool_choice filtering (a named choice keeps one)
  ToolChoiceMode tool_choice = ToolChoiceMode::kAuto;
  bool thinking = true;
  std::optional<ReasoningEffort> reasoning_effort;  // set only when thinking
  ResponseFormat response_format;
};

// Sampling fields: one per row of request/sampling_fields.h, under its name and type, plus the
// list-valued ones and the seed. Unset = the engine's default.
struct SamplingOptions {
#define DI_OPTIONAL_SAMPLING_MEMBER(type, name, ...) std::optional<type> name;
  DI_SAMPLING_SCALAR_FIELDS(DI_OPTIONAL_SAMPLING_MEMBER)
#undef DI_OPTIONAL_SAMPLING_MEMBER
  std::optional<int64_t> seed;
  ordered_json logit_bias;  // null or {"token id": bias}
  std::vector<std::string> stop;
  std::vector<int64_t> stop_token_ids;
};

struct InferenceOptions {
  SamplingOptions sampling;
  bool stream = false;
  bool include_usage = false;  // Chat: stream_options.include_usage (always true when !stream)
  std::optional<int64_t> thinking_budget_tokens;
  bool parallel_tool_calls = true;
  std::string user;  // OpenAI `user` / Anthropic metadata.user_id, for logging only
};

// A parsed request: the conversation, how to sample it, and the model it asked for.
struct ConversationRequest {
  Conversation conversation;
  InferenceOptions options;
  std::string model;  // as requested; alias resolution happens in prepare
};

}  // namespace di::recipe
