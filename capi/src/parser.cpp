// The C ABI's Parser section: di_parser wraps recipe::OutputParser and hands its events to the
// caller's callback. Argument checks and ownership only; parsing is the recipe's.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "capi/src/prepared_handle.h"
#include "recipe/protocol/output_parser.h"

struct di_parser {
  explicit di_parser(di::recipe::ParserOptions o, di::recipe::TokenDecoder d = {})
      : parser(std::move(o), std::move(d)) {}
  di::recipe::OutputParser parser;
  std::vector<di::recipe::SseEvent> events;  // reused between calls
};

namespace {

using di::capi::fail;

// The end of a field, for struct_size checks.
template <class T>
constexpr size_t field_end(size_t offset) {
  return offset + sizeof(T);
}

void deliver(di_parser* p, di_parse_event_fn on_event, void* user_data) {
  if (on_event != nullptr)
    for (const auto& e : p->events)
      on_event(user_data, e.name.c_str(), e.name.size(), e.data.c_str(), e.data.size());
  p->events.clear();
}

// Pushes one chunk and hands its events on; DI_END_OF_STREAM once the output has ended.
di_status push_output(di_parser* parser, const di::recipe::OutputChunk& c, di_parse_event_fn on_event,
                      void* user_data) {
  parser->parser.push(c, &parser->events);
  deliver(parser, on_event, user_data);
  return parser->parser.done() ? DI_END_OF_STREAM : DI_OK;
}

di::recipe::OutputFinish to_finish(int32_t f) {
  using F = di::recipe::OutputFinish;
  switch (f) {
    case DI_PARSE_FINISH_STOP: return F::kStop;
    case DI_PARSE_FINISH_LENGTH: return F::kLength;
    case DI_PARSE_FINISH_STOP_SEQUENCE: return F::kStopSequence;
    case DI_PARSE_FINISH_CONTENT_FILTER: return F::kContentFilter;
    case DI_PARSE_FINISH_CANCELLED: return F::kCancelled;
    case DI_PARSE_FINISH_ERROR: return F::kError;
    default: return F::kNone;
  }
}

// The text and token ids that both chunk kinds carry, checked (a NULL pointer needs a zero
// length), with the finish reason.
di::Result<di::recipe::OutputChunk> output_chunk(const char* text, size_t text_len, const int32_t* ids,
                                                 size_t num_ids, const char* num_ids_name, int32_t finish) {
  if (text == nullptr && text_len != 0)
    return di::Status::invalid_argument("chunk.text: NULL with a non-zero text_len");
  if (ids == nullptr && num_ids != 0)
    return di::Status::invalid_argument(std::string("chunk.token_ids: NULL with a non-zero ") + num_ids_name);
  di::recipe::OutputChunk c;
  c.text = std::string_view(text ? text : "", text_len);
  if (num_ids != 0) c.token_ids = {ids, num_ids};
  c.finish = to_finish(finish);
  return c;
}

di::Result<nlohmann::json> parse_json_arg(const char* text, size_t len, const char* name) {
  if (text == nullptr && len != 0)
    return di::Status::invalid_argument(std::string(name) + ": NULL with a non-zero length");
  if (len == 0) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(text, text + len, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return di::Status::parse(std::string(name) + ": not valid JSON");
  return j;
}

}  // namespace

extern "C" {

DI_API di_status di_parser_create(const di_prepared* prepared, const char* overrides_json,
                                  size_t len, di_parser** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(prepared, err);
  DI_REQUIRE_ARG(out, err);
  auto overrides = parse_json_arg(overrides_json, len, "overrides_json");
  if (!overrides.is_ok()) return fail(err, overrides.status());
  if (!overrides->is_object())
    return fail(err, DI_E_INVALID_ARG,
                "overrides_json: expected a JSON object, got " + std::string(overrides->type_name()));
  // The overrides go through the same validation as di_parser_create_from_json.
  nlohmann::json merged = di::recipe::parser_options_to_json(prepared->p.parser);
  for (const auto& [key, value] : overrides->items()) merged[key] = value;
  auto options = di::recipe::parser_options_from_json(merged);
  if (!options.is_ok()) return fail(err, options.status());
  di::recipe::TokenDecoder decoder;
  if (prepared->vocab) {
    decoder = [vocab = prepared->vocab](int32_t id) -> std::optional<std::string> {
      auto bytes = vocab->token_bytes(id);
      if (!bytes.is_ok()) return std::nullopt;
      return std::move(bytes).value();
    };
  }
  *out = new di_parser(std::move(options).value(), std::move(decoder));
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_parser_create_from_json(const char* options_json, size_t len,
                                            di_parser** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(out, err);
  auto j = parse_json_arg(options_json, len, "options_json");
  if (!j.is_ok()) return fail(err, j.status());
  auto options = di::recipe::parser_options_from_json(*j);
  if (!options.is_ok()) return fail(err, options.status());
  *out = new di_parser(std::move(options).value());
  return DI_OK;
  DI_API_END(err)
}

DI_API void di_parser_destroy(di_parser* parser) { delete parser; }

DI_API di_status di_parse_push(di_parser* parser, const di_parse_chunk* chunk,
                               di_parse_event_fn on_event, void* user_data, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(parser, err);
  DI_REQUIRE_ARG(chunk, err);
  const size_t size = chunk->struct_size;
  if (size < field_end<int32_t>(offsetof(di_parse_chunk, finish_reason)))
    return fail(err, DI_E_INVALID_ARG,
                "chunk.struct_size: " + std::to_string(size) + " is too small (set it to sizeof(di_parse_chunk))");
  auto has = [&](size_t offset, size_t bytes) { return size >= offset + bytes; };
  auto out = output_chunk(chunk->text, chunk->text_len, chunk->token_ids, chunk->num_token_ids, "num_token_ids",
                          chunk->finish_reason);
  if (!out.is_ok()) return fail(err, out.status());
  if (parser->parser.done()) return DI_END_OF_STREAM;
  di::recipe::OutputChunk& c = *out;
  if (has(offsetof(di_parse_chunk, prompt_tokens), sizeof(int64_t))) c.prompt_tokens = chunk->prompt_tokens;
  if (has(offsetof(di_parse_chunk, cached_prompt_tokens), sizeof(int64_t)))
    c.cached_prompt_tokens = chunk->cached_prompt_tokens;
  if (has(offsetof(di_parse_chunk, completion_tokens), sizeof(int64_t)))
    c.completion_tokens = chunk->completion_tokens;
  if (has(offsetof(di_parse_chunk, error_message_len), sizeof(size_t)) && chunk->error_message)
    c.error_message = std::string_view(chunk->error_message, chunk->error_message_len);
  return push_output(parser, c, on_event, user_data);
  DI_API_END(err)
}

DI_API di_status di_parse_push_chunk(di_parser* parser, const di_chunk* chunk,
                                     di_parse_event_fn on_event, void* user_data, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(parser, err);
  DI_REQUIRE_ARG(chunk, err);
  if (chunk->struct_size < offsetof(di_chunk, error_message_len) + sizeof(size_t))
    return fail(err, DI_E_INVALID_ARG,
                "chunk.struct_size: " + std::to_string(chunk->struct_size) +
                    " is too small (a di_chunk filled by this library's di_poll_chunk)");
  auto out = output_chunk(chunk->text, chunk->text_len, chunk->token_ids, chunk->num_tokens, "num_tokens",
                          chunk->finish_reason);
  if (!out.is_ok()) return fail(err, out.status());
  if (parser->parser.done()) return DI_END_OF_STREAM;
  di::recipe::OutputChunk& c = *out;
  c.prompt_tokens = chunk->prompt_tokens;
  c.cached_prompt_tokens = chunk->cached_prompt_tokens;
  c.completion_tokens = chunk->completion_tokens;
  if (chunk->error_message) c.error_message = std::string_view(chunk->error_message, chunk->error_message_len);
  // The engine's log-probabilities, which only an engine chunk carries (Chat Completions
  // `logprobs`).
  if (chunk->logprobs != nullptr && chunk->num_tokens != 0) {
    c.logprobs = {chunk->logprobs, chunk->num_tokens};
    if (chunk->num_top_logprobs > 0 && chunk->top_logprob_ids != nullptr && chunk->top_logprobs != nullptr) {
      c.num_top_logprobs = chunk->num_top_logprobs;
      c.top_logprob_ids = {chunk->top_logprob_ids, chunk->num_tokens * chunk->num_top_logprobs};
      c.top_logprobs = {chunk->top_logprobs, chunk->num_tokens * chunk->num_top_logprobs};
    }
  }
  return push_output(parser, c, on_event, user_data);
  DI_API_END(err)
}

DI_API di_status di_parse_finish(di_parser* parser, di_parse_event_fn on_event, void* user_data,
                                 di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(parser, err);
  parser->parser.finish(&parser->events);
  deliver(parser, on_event, user_data);
  return DI_END_OF_STREAM;
  DI_API_END(err)
}

DI_API di_status di_parse_response(const di_parser* parser, char** json, size_t* len,
                                   di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(parser, err);
  DI_REQUIRE_ARG(json, err);
  if (!parser->parser.done())
    return fail(err, DI_E_STATE,
                "parser: the output has not ended (call di_parse_finish or push a finish reason)");
  const std::string body = parser->parser.response().dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return di::capi::copy_text_out(body, json, len, err);
  DI_API_END(err)
}

}  // extern "C"
