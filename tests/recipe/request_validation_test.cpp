// Every request-validation rule of the three request parsers, each with the exact error a client
// gets: HTTP status, error body (type, param) and message.
#include <gtest/gtest.h>

#include "recipe/prepare/prepare.h"

namespace di::recipe {
namespace {

using json = nlohmann::json;

struct Case {
  const char* name;  // the behaviour, as the test name
  Protocol protocol;
  const char* body;
  int status;
  const char* param;  // OpenAI param ("" = null); unused for Anthropic
  const char* message;
};

constexpr Protocol C = Protocol::kChatCompletions;
constexpr Protocol R = Protocol::kResponses;
constexpr Protocol M = Protocol::kMessages;

#define U R"("messages":[{"role":"user","content":"hi"}])"
#define MU R"("model":"deepseek-v4","max_tokens":10,"messages":[{"role":"user","content":"hi"}])"
#define TOOL R"({"type":"function","function":{"name":"f","parameters":{"type":"object"}}})"
#define ATOOL R"({"name":"f","input_schema":{"type":"object"}})"

const Case kCases[] = {
    // --- request body ---
    {"BodyThatIsNotJsonIsRejected", C, "{nope", 400, "",
     "request body: could not parse the JSON body of your request (expected a JSON object)"},
    {"BodyThatIsAnArrayIsRejected", C, "[1]", 400, "", "request body: expected a JSON object, got an array"},
    {"BodyNestedDeeperThan128IsRejected", C, nullptr, 400, "",
     "request body: JSON nested deeper than 128 levels"},
    {"InvalidUtf8IsRejected", C, "{\"model\":\"\xff\"}", 400, "",
     "request body: expected UTF-8 JSON, got invalid UTF-8"},
    // --- Chat Completions ---
    {"ChatModelIsRequired", C, "{" U "}", 400, "model", "model: required, expected a string"},
    {"ChatUnknownModelIs404", C, R"({"model":"gpt-4o",)" U "}", 404, "model",
     "The model `gpt-4o` does not exist or you do not have access to it."},
    {"ChatMessagesMustBeAnArray", C, R"({"model":"deepseek-v4","messages":"hi"})", 400, "messages",
     "messages: expected an array, got a string"},
    {"ChatEmptyMessagesAreRejected", C, R"({"model":"deepseek-v4","messages":[]})", 400, "messages",
     "messages: Empty input messages"},
    {"ChatMaxTokensMustBePositive", C, R"({"model":"deepseek-v4","max_tokens":0,)" U "}", 400,
     "max_tokens", "max_tokens: expected an integer in [1, 2147483647], got 0"},
    {"ChatMaxTokensMustBeAnInteger", C, R"({"model":"deepseek-v4","max_tokens":1.5,)" U "}", 400,
     "max_tokens", "max_tokens: expected an integer, got 1.5"},
    {"ChatTemperatureAbove2IsRejected", C, R"({"model":"deepseek-v4","temperature":3,)" U "}", 400,
     "temperature", "temperature: expected a number in [0, 2], got 3"},
    {"ChatTemperatureOfWrongTypeIsRejected", C, R"({"model":"deepseek-v4","temperature":"hot",)" U "}",
     400, "temperature", "temperature: expected a number, got a string"},
    {"ChatTopPZeroIsRejected", C, R"({"model":"deepseek-v4","top_p":0,)" U "}", 400, "top_p",
     "top_p: expected a number in (0, 1], got 0"},
    {"ChatNZeroIsRejected", C, R"({"model":"deepseek-v4","n":0,)" U "}", 400, "n",
     "n: expected an integer in [1, 128], got 0"},
    {"ChatFrequencyPenaltyOutOfRangeIsRejected", C,
     R"({"model":"deepseek-v4","frequency_penalty":2.5,)" U "}", 400, "frequency_penalty",
     "frequency_penalty: expected a number in [-2, 2], got 2.5"},
    {"ChatPresencePenaltyOutOfRangeIsRejected", C,
     R"({"model":"deepseek-v4","presence_penalty":-3,)" U "}", 400, "presence_penalty",
     "presence_penalty: expected a number in [-2, 2], got -3"},
    {"ChatSeedBeyondInt64IsRejected", C,
     R"({"model":"deepseek-v4","seed":9223372036854775808,)" U "}", 400, "seed",
     "seed: expected an integer in [-9223372036854775808, 9223372036854775807], got 9223372036854775808"},
    {"ChatMoreThan16StopSequencesAreRejected", C,
     R"({"model":"deepseek-v4","stop":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"],)" U "}",
     400, "stop", "stop: expected at most 16 stop sequences, got 17"},
    {"ChatStopOfWrongTypeIsRejected", C, R"({"model":"deepseek-v4","stop":5,)" U "}", 400, "stop",
     "stop: expected a string or an array of strings, got 5"},
    {"ChatStreamOptionsNeedStream", C,
     R"({"model":"deepseek-v4","stream_options":{"include_usage":true},)" U "}", 400,
     "stream_options", "stream_options: only allowed when \"stream\" is true"},
    {"ChatJsonObjectNeedsTheWordJson", C,
     R"({"model":"deepseek-v4","response_format":{"type":"json_object"},)" U "}", 400, "messages",
     "messages: 'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."},
    {"ChatRegexResponseFormatIsRejected", C,
     R"({"model":"deepseek-v4","response_format":{"type":"regex"},)" U "}", 400,
     "response_format.type",
     "response_format.type: only \"text\", \"json_object\" and \"json_schema\" are supported, got \"regex\""},
    {"ChatJsonSchemaNeedsAName", C,
     R"({"model":"deepseek-v4","response_format":{"type":"json_schema","json_schema":{"schema":{}}},)" U "}",
     400, "response_format.json_schema.name",
     "response_format.json_schema.name: required, expected a string"},
    {"ChatToolNameWithSpaceIsRejected", C,
     R"({"model":"deepseek-v4","tools":[{"type":"function","function":{"name":"get weather"}}],)" U "}",
     400, "tools[0].function.name",
     "tools[0].function.name: expected 1 to 128 characters of a-z, A-Z, 0-9, '_' or '-', got \"get weather\""},
    {"ChatDuplicateToolNamesAreRejected", C, R"({"model":"deepseek-v4","tools":[)" TOOL "," TOOL "],"
     U "}", 400, "tools", "tools: tool names must be unique, \"f\" appears twice"},
    {"ChatToolParametersMustDescribeAnObject", C,
     R"({"model":"deepseek-v4","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"array"}}}],)" U "}",
     400, "tools[0].function.parameters",
     "tools[0].function.parameters: expected a JSON Schema with \"type\": \"object\", got type \"array\""},
    {"ChatToolTypeMustBeFunction", C,
     R"({"model":"deepseek-v4","tools":[{"type":"code_interpreter"}],)" U "}", 400, "tools[0].type",
     "tools[0].type: expected one of \"function\", got \"code_interpreter\""},
    {"ChatNamedToolChoiceMustNameATool", C,
     R"({"model":"deepseek-v4","tools":[)" TOOL R"(],"tool_choice":{"type":"function","function":{"name":"g"}},)" U "}",
     400, "tool_choice.function.name", "tool_choice.function.name: no tool named \"g\" in tools"},
    {"ChatRequiredToolChoiceNeedsTools", C, R"({"model":"deepseek-v4","tool_choice":"required",)" U "}",
     400, "tool_choice", "tool_choice: \"required\" needs at least one tool in tools"},
    {"ChatRequiredToolChoiceConflictsWithExplicitThinking", C,
     R"({"model":"deepseek-v4","thinking":{"type":"enabled"},"tools":[)" TOOL R"(],"tool_choice":"required",)" U "}",
     400, "tool_choice",
     "tool_choice: thinking mode does not support a required or named tool_choice; disable thinking or use \"auto\""},
    {"ChatUnknownReasoningEffortIsRejected", C,
     R"({"model":"deepseek-v4","reasoning_effort":"extreme",)" U "}", 400, "reasoning_effort",
     "reasoning_effort: expected one of \"none\", \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\" or \"max\", got \"extreme\""},
    {"ChatUnknownThinkingTypeIsRejected", C, R"({"model":"deepseek-v4","thinking":{"type":"on"},)" U "}",
     400, "thinking.type",
     "thinking.type: expected one of \"enabled\", \"adaptive\" or \"disabled\", got \"on\""},
    {"ChatUnknownRoleIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"function","content":"x"}]})", 400,
     "messages[0].role",
     "messages[0].role: expected one of \"system\", \"developer\", \"user\", \"assistant\", \"tool\" or \"latest_reminder\", got \"function\""},
    {"ChatAssistantNeedsContentOrToolCalls", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant"}]})", 400,
     "messages[1]", "messages[1]: an assistant message needs content or tool_calls"},
    {"ChatEmptyToolCallsAreRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b","tool_calls":[]}]})",
     400, "messages[1].tool_calls", "messages[1].tool_calls: must not be empty when present"},
    {"ChatToolCallArgumentsMustBeAJsonObject", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"[1]"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]})",
     400, "messages[1].tool_calls[0].function.arguments",
     "messages[1].tool_calls[0].function.arguments: expected a JSON object encoded as a string"},
    {"ChatDuplicateToolCallIdsAreRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]})",
     400, "messages[1].tool_calls", "messages[1].tool_calls: tool call ids must be unique, \"c1\" appears twice"},
    {"ChatEmptyToolCallIdIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"f","arguments":"{}"}}]}]})",
     400, "messages[1].tool_calls[0].id", "messages[1].tool_calls[0].id: must not be empty"},
    {"ChatUnansweredToolCallIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"b"}]})",
     400, "messages[2]", "messages[2]: expected a tool message answering tool call \"c1\" of messages[1]"},
    {"ChatToolCallWithoutAnyAnswerIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]})",
     400, "messages", "messages: tool call \"c1\" of messages[1] has no tool message answering it"},
    {"ChatStrayToolMessageIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c9","content":"r"}]})",
     400, "messages[1]",
     "messages[1]: a tool message must answer a tool call of the assistant message before it (tool_call_id \"c9\")"},
    {"ChatToolMessageWithWrongIdIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"r"}]})",
     400, "messages[2].tool_call_id",
     "messages[2].tool_call_id: \"c2\" does not answer an open tool call of messages[1]"},
    {"ChatSecondToolMessageForAnIdIsRejectedAsADuplicate", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"c1","content":"r"}]})",
     400, "messages[3].tool_call_id",
     "messages[3].tool_call_id: duplicate tool result for tool call \"c1\" of messages[1], already answered by messages[2]"},
    {"ChatDuplicateToolMessageIsNamedWhileOtherCallsAreOpen", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"c2","content":"r"}]})",
     400, "messages[3].tool_call_id",
     "messages[3].tool_call_id: duplicate tool result for tool call \"c1\" of messages[1], already answered by messages[2]"},
    {"ChatImageInSystemMessageIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},{"role":"user","content":"a"}]})",
     400, "messages[0].content[0]", "messages[0].content[0]: Image in system message is unsupported"},
    {"ChatFileIdIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f1"}}]}]})",
     400, "messages[0].content[0].file.file_id",
     "messages[0].content[0].file.file_id: file_id is not supported. Pass the file as a base64 data url instead."},
    {"ChatTopLogprobsNeedLogprobs", C,
     R"({"model":"deepseek-v4","logprobs":false,"top_logprobs":3,)" U "}", 400, "top_logprobs",
     "top_logprobs: requires logprobs to be true"},
    {"ChatLogitBiasKeysAreTokenIds", C, R"({"model":"deepseek-v4","logit_bias":{"abc":1},)" U "}", 400,
     "logit_bias.abc", "logit_bias.abc: expected a token id (a non-negative integer) as key, got \"abc\""},
    {"ChatMinPAboveOneIsRejected", C, R"({"model":"deepseek-v4","min_p":2,)" U "}", 400, "min_p",
     "min_p: expected a number in [0, 1], got 2"},
    {"ChatRepetitionPenaltyMustBePositive", C, R"({"model":"deepseek-v4","repetition_penalty":0,)" U "}", 400,
     "repetition_penalty", "repetition_penalty: expected a number > 0, got 0"},
    {"ChatMinTokensAboveMaxTokensIsRejected", C,
     R"({"model":"deepseek-v4","max_tokens":5,"min_tokens":9,)" U "}", 400, "min_tokens",
     "min_tokens: must not exceed the output token limit (5), got 9"},
    {"ChatUnknownToolChoiceIsRejected", C, R"({"model":"deepseek-v4","tool_choice":"sometimes",)" U "}", 400,
     "tool_choice", "tool_choice: expected one of \"none\", \"auto\" or \"required\", got \"sometimes\""},
    {"ChatImageInAssistantMessageIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]})",
     400, "messages[1].content[0]", "messages[1].content[0]: Image in assistant message is unsupported"},
    {"ChatTopPOfWrongTypeIsRejected", C, R"({"model":"deepseek-v4","top_p":"x",)" U "}", 400, "top_p",
     "top_p: expected a number, got a string"},
    {"ChatStreamOfWrongTypeIsRejected", C, R"({"model":"deepseek-v4","stream":"yes",)" U "}", 400, "stream",
     "stream: expected a boolean, got a string"},
    {"ChatContentOfWrongTypeIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":5}]})", 400, "messages[0].content",
     "messages[0].content: expected a string or an array of content parts, got 5"},
    {"ChatUnsupportedContentPartIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"input_audio"}]}]})", 400,
     "messages[0].content[0].type",
     "messages[0].content[0].type: unsupported content part type \"input_audio\" in a user message"},
    {"ChatImageUrlMustBeHttpOrBase64DataUrl", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x"}}]}]})",
     400, "messages[0].content[0].image_url.url",
     "messages[0].content[0].image_url.url: expected an http(s) URL or a base64 data URL"},
    {"ChatToolParametersMustBeAnObject", C,
     R"({"model":"deepseek-v4","tools":[{"type":"function","function":{"name":"f","parameters":[1]}}],)" U "}",
     400, "tools[0].function.parameters", "tools[0].function.parameters: expected an object, got an array"},
    // --- Responses ---
    {"ResponsesNeedInputOrInstructions", R, R"({"model":"deepseek-v4"})", 400, "input",
     "input: required (or instructions)"},
    {"ResponsesPreviousResponseIdIsRejected", R,
     R"({"model":"deepseek-v4","input":"hi","previous_response_id":"resp_1"})", 400,
     "previous_response_id",
     "previous_response_id: stored responses are not supported; send the whole conversation in input"},
    {"ResponsesMaxOutputTokensMustBePositive", R,
     R"({"model":"deepseek-v4","input":"hi","max_output_tokens":0})", 400, "max_output_tokens",
     "max_output_tokens: expected an integer in [1, 2147483647], got 0"},
    {"ResponsesImageFileIdIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":[{"type":"input_image","file_id":"f1"}]}]})",
     400, "input[0].content[0].file_id",
     "input[0].content[0].file_id: file_id is not supported. Pass the image as a base64 data url instead."},
    {"ResponsesUnsupportedContentTypeIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":[{"type":"input_audio"}]}]})", 400,
     "input[0].content[0].type", "input[0].content[0].type: unsupported content type \"input_audio\""},
    {"ResponsesOnlyApplyPatchCustomToolIsSupported", R,
     R"({"model":"deepseek-v4","input":"hi","tools":[{"type":"custom","name":"shell"}]})", 400,
     "tools[0].name",
     "tools[0].name: only the \"apply_patch\" custom tool is supported, got \"shell\""},
    {"ResponsesUnsupportedToolTypeIsRejected", R,
     R"({"model":"deepseek-v4","input":"hi","tools":[{"type":"file_search"}]})", 400, "tools[0].type",
     "tools[0].type: unsupported tool type \"file_search\""},
    {"ResponsesFunctionCallNeedsOutputBeforeNextMessage", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"role":"user","content":"b"}]})",
     400, "input[2]",
     "input[2]: tool call \"c1\" has no output before this item; every function_call needs a function_call_output"},
    {"ResponsesDuplicateCallIdsAreRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]})",
     400, "input[2].call_id", "input[2].call_id: call ids must be unique, \"c1\" appears twice"},
    {"ResponsesOutputForUnknownCallIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":"a"},{"type":"function_call_output","call_id":"c7","output":"x"}]})",
     400, "input[1].call_id",
     "input[1].call_id: \"c7\" does not answer an earlier function_call without output"},
    {"ResponsesUnknownEffortIsRejected", R,
     R"({"model":"deepseek-v4","input":"hi","reasoning":{"effort":"huge"}})", 400, "reasoning.effort",
     "reasoning.effort: expected one of \"none\", \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\" or \"max\", got \"huge\""},
    {"ResponsesJsonSchemaNeedsASchema", R,
     R"({"model":"deepseek-v4","input":"hi","text":{"format":{"type":"json_schema","name":"x"}}})", 400,
     "text.format.schema", "text.format.schema: required, expected a JSON Schema object"},
    {"ResponsesNamedToolChoiceMustNameATool", R,
     R"({"model":"deepseek-v4","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}})",
     400, "tool_choice.name", "tool_choice.name: no function tool named \"g\" in tools"},
    {"ResponsesItemReferenceIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"type":"item_reference","id":"msg_1"}]})", 400, "input[0].type",
     "input[0].type: item_reference needs stored responses, which are not supported"},
    {"ResponsesEmptyCallIdIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"","name":"f","arguments":"{}"}]})",
     400, "input[1].call_id", "input[1].call_id: must not be empty"},
    {"ResponsesSecondOutputForACallIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"x"},{"type":"function_call_output","call_id":"c1","output":"y"}]})",
     400, "input[3].call_id", "input[3].call_id: duplicate output for call \"c1\", already answered by input[2]"},
    {"ResponsesDuplicateOutputIsNamedAcrossItems", R,
     R"({"model":"deepseek-v4","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"x"},{"role":"user","content":"b"},{"type":"custom_tool_call_output","call_id":"c1","output":"y"}]})",
     400, "input[4].call_id", "input[4].call_id: duplicate output for call \"c1\", already answered by input[2]"},
    {"ResponsesRegexFormatIsRejected", R,
     R"({"model":"deepseek-v4","input":"a","text":{"format":{"type":"regex"}}})", 400, "text.format.type",
     "text.format.type: expected one of \"text\", \"json_object\" or \"json_schema\", got \"regex\""},
    {"ResponsesNamespaceNeedsItsTools", R,
     R"({"model":"deepseek-v4","input":"a","tools":[{"type":"namespace","name":"n"}]})", 400, "tools[0].tools",
     "tools[0].tools: required, expected an array of function tools"},
    {"ResponsesImageInAssistantMessageIsRejected", R,
     R"({"model":"deepseek-v4","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]})",
     400, "input[0].content[0]", "input[0].content[0]: Image in assistant message is unsupported"},
    {"ResponsesInstructionsOfWrongTypeIsRejected", R, R"({"model":"deepseek-v4","instructions":5,"input":"a"})",
     400, "instructions", "instructions: expected a string, got 5"},
    // --- Anthropic Messages ---
    {"MessagesModelIsRequired", M, R"({"messages":[{"role":"user","content":"hi"}]})", 400, "model",
     "model: required, expected a string"},
    {"MessagesUnknownModelIs404", M, R"({"model":"claude-x","messages":[{"role":"user","content":"hi"}]})",
     404, "model", "model: claude-x"},
    {"MessagesTemperatureAboveOneIsRejected", M, "{" MU R"(,"temperature":1.5})", 400, "temperature",
     "temperature: expected a number in [0, 1], got 1.5"},
    {"MessagesEmptyMessagesAreRejected", M, R"({"model":"deepseek-v4","messages":[]})", 400, "messages",
     "messages: at least one message is required"},
    {"MessagesEmptyContentListIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[]}]})", 400, "messages.0.content",
     "messages.0.content: messages must have non-empty content"},
    {"MessagesUnknownRoleIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"tool","content":"x"}]})", 400, "messages.0.role",
     "messages.0.role: expected \"user\" or \"assistant\", got \"tool\""},
    {"MessagesImageInSystemIsRejected", M,
     R"({"model":"deepseek-v4","system":[{"type":"image","source":{"type":"url","url":"https://x"}}],"messages":[{"role":"user","content":"hi"}]})",
     400, "system.0", "system.0: Image in system message is unsupported"},
    {"MessagesEmptyStopSequenceIsRejected", M, "{" MU R"(,"stop_sequences":[""]})", 400,
     "stop_sequences.0", "stop_sequences.0: stop sequences must not be empty"},
    {"MessagesMoreThan16StopSequencesAreRejected", M,
     "{" MU R"(,"stop_sequences":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]})",
     400, "stop_sequences", "stop_sequences: expected at most 16 stop sequences, got 17"},
    {"MessagesServerToolsAreRejected", M,
     "{" MU R"(,"tools":[{"type":"web_search_20250305","name":"web_search"}]})", 400, "tools.0",
     "tools.0: server tools are not supported"},
    {"MessagesToolNeedsInputSchema", M, "{" MU R"(,"tools":[{"name":"f"}]})", 400, "tools.0.input_schema",
     "tools.0.input_schema: required, expected a JSON Schema object"},
    {"MessagesNamedToolChoiceMustNameATool", M,
     "{" MU R"(,"tools":[)" ATOOL R"(],"tool_choice":{"type":"tool","name":"g"}})", 400, "tool_choice.name",
     "tool_choice.name: no tool named \"g\" in tools"},
    {"MessagesForcedToolConflictsWithEnabledThinking", M,
     "{" MU R"(,"tools":[)" ATOOL R"(],"tool_choice":{"type":"any"},"thinking":{"type":"enabled","budget_tokens":2048}})",
     400, "tool_choice", "tool_choice: Thinking may not be enabled when tool_choice forces tool use."},
    {"MessagesUnknownEffortIsRejected", M, "{" MU R"(,"output_config":{"effort":"huge"}})", 400,
     "output_config.effort",
     "output_config.effort: expected one of \"low\", \"medium\", \"high\", \"xhigh\", \"ultra\" or \"max\", got \"huge\""},
    {"MessagesToolUseInUserMessageIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]})",
     400, "messages.0.content.0.type",
     "messages.0.content.0.type: `tool_use` blocks are only allowed in assistant messages"},
    {"MessagesTextAfterToolUseIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"text","text":"x"}]}]})",
     400, "messages.1.content.1",
     "messages.1.content.1: text after a tool_use block is not supported in an assistant message"},
    {"MessagesUnansweredToolUseIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":"b"}]})",
     400, "messages.1",
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
    {"MessagesDuplicateToolUseIdsAreRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]})",
     400, "messages.1.content.1.id",
     "messages.1.content.1.id: `tool_use` ids must be unique, \"t1\" appears twice"},
    {"MessagesEmptyToolUseIdIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"","name":"f","input":{}}]}]})",
     400, "messages.1.content.0.id", "messages.1.content.0.id: must not be empty"},
    {"MessagesToolResultForUnknownIdIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"r"}]}]})",
     400, "messages.2.content.0",
     "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
    {"MessagesImageFileSourceIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]})",
     400, "messages.0.content.0.source.type",
     "messages.0.content.0.source.type: file sources are not supported. Pass the image as base64 data instead."},
    {"MessagesImageMediaTypeMustBeAnImage", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AAAA"}}]}]})",
     400, "messages.0.content.0.source.media_type",
     "messages.0.content.0.source.media_type: expected one of \"image/jpeg\", \"image/png\", \"image/gif\" or \"image/webp\", got \"image/bmp\""},
    {"MessagesMaxTokensMustBePositive", M,
     R"({"model":"deepseek-v4","max_tokens":0,"messages":[{"role":"user","content":"a"}]})", 400, "max_tokens",
     "max_tokens: expected an integer in [1, 2147483647], got 0"},
    {"MessagesTopPAboveOneIsRejected", M, "{" MU R"(,"top_p":1.5})", 400, "top_p",
     "top_p: expected a number in (0, 1], got 1.5"},
    {"MessagesUnknownThinkingTypeIsRejected", M, "{" MU R"(,"thinking":{"type":"sometimes"}})", 400,
     "thinking.type", "thinking.type: expected one of \"enabled\", \"adaptive\" or \"disabled\", got \"sometimes\""},
    {"MessagesUnknownToolChoiceIsRejected", M, "{" MU R"(,"tool_choice":{"type":"maybe"}})", 400,
     "tool_choice.type", "tool_choice.type: expected one of \"auto\", \"any\", \"tool\" or \"none\", got \"maybe\""},
    {"MessagesToolInputSchemaMustDescribeAnObject", M,
     "{" MU R"(,"tools":[{"name":"f","input_schema":{"type":"array"}}]})", 400, "tools.0.input_schema",
     "tools.0.input_schema: expected a JSON Schema with \"type\": \"object\", got type \"array\""},
    {"MessagesThinkingBlockInUserMessageIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"thinking","thinking":"x","signature":"s"}]}]})",
     400, "messages.0.content.0.type",
     "messages.0.content.0.type: `thinking` blocks are only allowed in assistant messages"},
    {"MessagesSecondToolResultForAnIdIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"},{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]})",
     400, "messages.2.content.1.tool_use_id",
     "messages.2.content.1.tool_use_id: each tool_use must have a single result. Found multiple `tool_result` blocks with id: t1 (already answered by messages.2.content.0)"},
    {"MessagesServerToolUseInHistoryIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]})",
     400, "messages.1.content.0.type", "messages.1.content.0.type: server tools are not supported"},
    {"MessagesImageInAssistantMessageIsRejected", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"image","source":{"type":"url","url":"https://x"}}]}]})",
     400, "messages.1.content.0", "messages.1.content.0: Image in assistant message is unsupported"},
    {"ChatImagePlaceholderInUserTextIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"see <｜image｜> here"}]})", 400, "messages",
     "messages: the text <｜image｜> is reserved for images and may not appear in the text of message 0 of the "
     "conversation; send images as image content blocks"},
    {"ChatImagePlaceholderInToolArgumentsIsRejected", C,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":\"<｜image｜>\"}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]})",
     400, "messages",
     "messages: the text <｜image｜> is reserved for images and may not appear in a tool call of message 1 of the "
     "conversation; send images as image content blocks"},
    {"ResponsesImagePlaceholderInInstructionsIsRejected", R,
     R"({"model":"deepseek-v4","instructions":"<｜image｜>","input":"a"})", 400, "input",
     "input: the text <｜image｜> is reserved for images and may not appear in the text of message 0 of the "
     "conversation; send images as image content blocks"},
    {"MessagesImagePlaceholderInToolDescriptionIsRejected", M,
     R"({"model":"deepseek-v4","max_tokens":8,"messages":[{"role":"user","content":"a"}],"tools":[{"name":"f","description":"<｜image｜>","input_schema":{"type":"object"}}]})",
     400, "tools",
     "tools: the text <｜image｜> is reserved for images and may not appear in a tool definition; send images as "
     "image content blocks"},
    {"MessagesImagePlaceholderInThinkingIsRejected", M,
     R"({"model":"deepseek-v4","max_tokens":8,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"<｜image｜>","signature":"s"},{"type":"text","text":"b"}]},{"role":"user","content":"c"}]})",
     400, "messages",
     "messages: the text <｜image｜> is reserved for images and may not appear in the reasoning of message 1 of the "
     "conversation; send images as image content blocks"},
    {"MessagesImageBase64MustDecode", M,
     R"({"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO!!"}}]}]})",
     400, "messages.0.content.0.source.data",
     "messages.0.content.0.source.data: invalid base64 at offset 4"},
};

class RequestValidation : public ::testing::TestWithParam<Case> {};

TEST_P(RequestValidation, RejectsWithTheProtocolsError) {
  const Case& c = GetParam();
  std::string body = c.body != nullptr ? c.body : std::string(200, '[') + std::string(200, ']');
  RecipeConfig cfg;
  auto r = prepare(cfg, {}, c.protocol, body);
  ASSERT_FALSE(r.is_ok()) << body;
  json d = json::parse(r.status().detail());
  EXPECT_EQ(d["status"], c.status);
  const json& b = d["body"];
  if (c.protocol == Protocol::kMessages) {
    EXPECT_EQ(b["type"], "error");
    EXPECT_EQ(b["error"]["type"], c.status == 404 ? "not_found_error" : "invalid_request_error");
    EXPECT_EQ(b["error"]["message"], c.message);
  } else {
    EXPECT_EQ(b["error"]["type"], "invalid_request_error");
    EXPECT_EQ(b["error"]["message"], c.message);
    if (std::string(c.param).empty()) {
      EXPECT_TRUE(b["error"]["param"].is_null());
    } else {
      EXPECT_EQ(b["error"]["param"], c.param);
    }
    if (c.status == 404) {
      EXPECT_EQ(b["error"]["code"], "model_not_found");
    }
  }
}

// The duplicate check is per turn: a later assistant turn may reuse a call id (clients that
// number calls per turn do), and its tool message is then an answer, not a duplicate.
TEST(RequestValidationDuplicates, ChatToolCallIdReusedByALaterTurnIsAccepted) {
  const char* body =
      R"({"model":"deepseek-v4","messages":[{"role":"user","content":"a"},)"
      R"({"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"r"},{"role":"user","content":"b"},)"
      R"({"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"s"}]})";
  RecipeConfig cfg;
  auto r = prepare(cfg, {}, Protocol::kChatCompletions, body);
  ASSERT_TRUE(r.is_ok()) << r.status().detail();
}

INSTANTIATE_TEST_SUITE_P(Rules, RequestValidation, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace di::recipe
