// The steps the three request parsers share: the request's start (model), an array of JSON
// objects walked with their Fields, the thinking switch object, a forced tool_choice against
// thinking, narrowing tools to a named one, and a json_schema response format. Each API keeps
// its own field names and error wording; these only remove the repeated mechanics.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <optional>

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/request_fields.h"
#include "recipe/protocol/sampling_fields.h"
#include "recipe/protocol/thinking.h"
#include "recipe/protocol/tool_fields.h"

namespace di::recipe {

// A 400 for `param` whose message starts with "param: " (just `message` when param is "").
Status bad_param(Protocol protocol, const std::string& param, const std::string& message);

// The "type" string of a content block or item, "" when absent or not a string.
std::string block_type(const ordered_json& block);

// One API's request: the required "model" is read here, then `read` fills the conversation
// and the options from the top-level fields.
using ReadFn = Status (*)(const Fields& top, const ConversionOptions& options, Conversation& conv,
                          InferenceOptions& io);
Result<ConversationRequest> parse_request_fields(Protocol protocol, const ordered_json& body,
                                                 const ConversionOptions& options, ReadFn read);

// Calls fn(fields, i) for each element of `array`, whose params are `path_of(i)`; a non-object
// element is a 400 naming it. Stops at the first error fn returns.
using ElementFn = std::function<Status(const Fields& element, size_t index)>;
Status for_each_object(Protocol protocol, const ordered_json& array,
                       const std::function<std::string(size_t)>& path_of, const ElementFn& fn);

// Content that all three APIs accept as a string or an array of objects: a string goes to
// on_string, the array's elements to for_each_object(path_of, on_element); anything else is a
// 400 on `param`: "expected a string or an array of <elements>, got <what came>".
Status read_string_or_objects(Protocol protocol, const ordered_json& content,
                              const std::string& param, const std::string& elements,
                              const std::function<void(std::string)>& on_string,
                              const std::function<std::string(size_t)>& path_of,
                              const ElementFn& on_element);

// The "tools" array: `read` returns each element's tool, or nullopt to drop it; the tools are
// appended to `tools` and their names must be unique.
using ToolFn = std::function<Result<std::optional<ToolDefinition>>(const Fields& tool)>;
Status read_tools(const Fields& top, const std::function<std::string(size_t)>& path_of,
                  const ToolFn& read, std::vector<ToolDefinition>& tools);

// OpenAI's tool_choice: "none" | "auto" | "required", or an object `read_object` handles;
// anything else is a 400 "expected <expected>, got ...". A required choice needs a tool.
// Returns whether the choice forces a tool call.
Result<bool> read_openai_tool_choice(const Fields& top, const std::string& expected,
                                     const std::function<Status(const Fields& choice)>& read_object,
                                     Conversation& conv);

// The `thinking: {type: enabled|adaptive|disabled, budget_tokens}` object (Chat extension and
// Anthropic): sets c.explicit_switch and io.thinking_budget_tokens. `missing_type` is the
// message when "type" is absent.
Status read_thinking_object(const Fields& top, const std::string& missing_type, ThinkingChoice& c,
                            InferenceOptions& io);

// Resolves thinking (resolve_thinking) and settles it against a forced tool choice: thinking
// that was asked for explicitly conflicts (400 on "tool_choice" with `conflict_message`),
// thinking that is only the default gives way.
Status resolve_thinking_with_tool_choice(Protocol protocol, const ThinkingChoice& c,
                                         bool default_thinking, bool forced_tool,
                                         const std::string& conflict_message, Conversation& conv);

// Keeps only the tools `keep` accepts and sets tool_choice to required; false (tools untouched)
// when none is accepted.
bool narrow_to_tool(Conversation& conv, const std::function<bool(const ToolDefinition&)>& keep);

// "none" | "auto" | "required" → the mode.
ToolChoiceMode tool_choice_mode(const std::string& word);

// {name, schema, strict} of a json_schema response format (Chat `response_format.json_schema`,
// Responses `text.format`); the name is 1..64 of [A-Za-z0-9_-].
Status read_json_schema_format(const Fields& f, bool schema_required, ResponseFormat& out);

}  // namespace di::recipe
