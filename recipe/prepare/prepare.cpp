// The request pipeline: parse → resolve model → render → tokenize → budget. Every failure is
// the protocol's error (400/404) carried in the Status detail.
#include "recipe/prepare/prepare.h"

#include "recipe/chat_template/conversation_template.h"
#include "recipe/encoding/conversation_render.h"
#include "recipe/prepare/engine_constraint.h"
#include "recipe/protocol/chat_completions/request.h"
#include "recipe/protocol/messages/request.h"
#include "recipe/protocol/request_fields.h"
#include "recipe/protocol/request_steps.h"
#include "recipe/protocol/responses/request.h"

namespace di::recipe {
namespace {

// The engine's sampling parameters from the request's: unset fields keep the engine's defaults.
// Ranges were checked by the protocol readers (sampling_fields.cpp), so the narrowing is exact.
di::request::SamplingParams sampling_params(const SamplingOptions& s) {
  di::request::SamplingParams p;
#define DI_COPY_SET_FIELD(type, name, ...) \
  if (s.name) p.name = *s.name;
  DI_SAMPLING_SCALAR_FIELDS(DI_COPY_SET_FIELD)
#undef DI_COPY_SET_FIELD
  if (s.seed) p.seed = static_cast<uint64_t>(*s.seed);
  if (s.logit_bias.is_object())
    for (const auto& [k, v] : s.logit_bias.items()) p.logit_bias.emplace_back(std::stoi(k), v.get<float>());
  for (int64_t id : s.stop_token_ids) p.stop_token_ids.push_back(static_cast<int32_t>(id));
  return p;
}

Status budget_error(Protocol p, int64_t prompt, int64_t max_tokens, int64_t context) {
  std::string msg;
  if (p == Protocol::kMessages) {
    msg = max_tokens <= 0 || prompt >= context
              ? "prompt is too long: " + std::to_string(prompt) + " tokens > " +
                    std::to_string(context) + " maximum"
              : "input length and `max_tokens` exceed context limit: " + std::to_string(prompt) +
                    " + " + std::to_string(max_tokens) + " > " + std::to_string(context) +
                    ", decrease input length or `max_tokens` and try again";
  } else {
    const char* what = p == Protocol::kResponses ? "input" : "messages";
    msg = "This model's maximum context length is " + std::to_string(context) +
          " tokens. However, you requested " + std::to_string(prompt + std::max<int64_t>(max_tokens, 0)) +
          " tokens (" + std::to_string(prompt) + " in the " + what + ", " +
          std::to_string(std::max<int64_t>(max_tokens, 0)) +
          " in the completion). Please reduce the length of the " + what + " or completion.";
  }
  ApiError e = ApiError::context_length_exceeded(p, std::move(msg));
  e.param = p == Protocol::kResponses ? "input" : "messages";
  return e.to_status();
}

Status as_api_error(Protocol p, Status s) {
  if (!s.detail().empty()) return s;
  return api_error_from_status(p, s).to_status();
}

}  // namespace

Result<ConversationRequest> parse_request(Protocol protocol, std::string_view body,
                                          const ConversionOptions& options) {
  DI_ASSIGN_OR_RETURN(ordered_json j, parse_request_body(protocol, body));
  ReadFn read = nullptr;  // the API's reader of the top-level fields
  switch (protocol) {
    case Protocol::kChatCompletions: read = read_chat_completions_fields; break;
    case Protocol::kResponses: read = read_responses_fields; break;
    case Protocol::kMessages: read = read_messages_fields; break;
  }
  if (read == nullptr) return Status::internal("unknown protocol");
  return parse_request_fields(protocol, j, options, read);
}

Result<Prepared> prepare(const RecipeConfig& config, const PromptTokenizer& tokenizer,
                         Protocol protocol, std::string_view body) {
  DI_ASSIGN_OR_RETURN(ConversationRequest req, parse_request(protocol, body, config.conversion));
  Prepared out;
  out.protocol = protocol;
  out.encoding = config.chat_template ? std::string("chat_template") : std::string(encoding_name(config.encoding));
  out.requested_model = req.model;
  DI_ASSIGN_OR_RETURN(out.model, config.models.resolve(protocol, req.model));
  // Only Chat Completions has a place for several choices; Responses and Messages answer with
  // one output.
  const int64_t n = req.options.sampling.n.value_or(1);
  if (n > 1 && protocol != Protocol::kChatCompletions)
    return ApiError::bad_request(protocol, "n",
                                 "n: this API returns one output per request; got " + std::to_string(n) +
                                     " (Chat Completions takes n > 1)")
        .to_status();
  out.stream = req.options.stream;

  if (config.image_policy == ImagePolicy::kReject) {
    for (size_t i = 0; i < req.conversation.messages.size(); ++i)
      for (const auto& p : req.conversation.messages[i].content)
        if (p.kind == ContentPart::Kind::kImage)
          return ApiError::bad_request(protocol, protocol == Protocol::kResponses ? "input" : "messages",
                                       "images are not supported by model " + out.model)
              .to_status();
  }
  const bool vision = config.image_policy == ImagePolicy::kVision;
  auto rendered = config.chat_template
                      ? chat_template::render_with_template(*config.chat_template, req.conversation)
                      : render_conversation(req.conversation, config.encoding, vision);
  if (!rendered.is_ok()) return as_api_error(protocol, rendered.status());
  ConversationPrompt& cp = *rendered;
  out.prompt = cp.prompt.str();
  out.images = cp.images;
  if (vision && !out.images.empty()) {
    DI_ASSIGN_OR_RETURN(image::ResolvedImages resolved,
                        resolve_request_images(config.image_options, protocol, out.images));
    out.image_data = std::move(resolved.images);
    out.image_tokens = static_cast<int64_t>(resolved.token_adjustment);
  }

  SamplingOptions& s = req.options.sampling;
  if (tokenizer) {
    auto tok = tokenizer(cp.prompt);
    if (!tok.is_ok()) return as_api_error(protocol, tok.status());
    out.ids = std::move(tok->ids);
    out.special_ranges = std::move(tok->special_ranges);
    // Each image's placeholder is one id; the rest of its token grid comes on top.
    out.prompt_tokens = static_cast<int64_t>(out.ids.size()) + out.image_tokens;
    const int64_t room = config.context_length - out.prompt_tokens;
    if (room <= 0) return budget_error(protocol, out.prompt_tokens, s.max_tokens.value_or(0),
                                       config.context_length);
    if (!s.max_tokens) {
      s.max_tokens = room;  // as vLLM: the rest of the context
    } else if (*s.max_tokens > room) {
      if (!config.clamp_max_tokens)
        return budget_error(protocol, out.prompt_tokens, *s.max_tokens, config.context_length);
      s.max_tokens = room;
    }
    if (s.min_tokens && s.max_tokens && *s.min_tokens > *s.max_tokens) s.min_tokens = s.max_tokens;
  }

  out.engine.sampling = sampling_params(s);
  out.stop_sequences = s.stop;
  const Conversation& conv = req.conversation;
  switch (conv.response_format.type) {
    case ResponseFormat::Type::kText: break;
    case ResponseFormat::Type::kJsonObject: out.constraint.kind = OutputConstraint::Kind::kJsonObject; break;
    case ResponseFormat::Type::kJsonSchema:
      out.constraint.kind = OutputConstraint::Kind::kJsonSchema;
      out.constraint.schema = conv.response_format.schema;
      out.constraint.name = conv.response_format.name;
      out.constraint.strict = conv.response_format.strict;
      break;
  }

  ParserOptions& po = out.parser;
  po.protocol = protocol;
  po.encoding = config.encoding == Encoding::kDsv41 ? EncodingVersion::kDsv41 : EncodingVersion::kDsv4;
  po.prompt_opened_thinking = cp.opened_thinking;
  po.thinking = conv.thinking;
  // DeepSeek's DSML, or the format a templated model's own template writes calls in.
  po.tool_format = config.chat_template ? config.chat_template->tool_format : ToolCallFormat::kDsml;
  po.parse_tool_calls = po.tool_format != ToolCallFormat::kNone && conv.tool_choice != ToolChoiceMode::kNone &&
                        !conv.tools.empty();
  po.prompt_opened_tool_calls = cp.opened_tool_calls;
  po.parallel_tool_calls = req.options.parallel_tool_calls;
  if (po.parse_tool_calls) {
    for (const auto& t : conv.tools) {
      ToolSpec spec;
      spec.name = t.name;
      spec.parameters = nlohmann::json::parse(t.parameters.dump());
      spec.strict = t.strict.value_or(false);
      spec.type = t.custom ? "custom" : "function";
      po.tools.push_back(std::move(spec));
    }
  }
  po.json_object = conv.response_format.type != ResponseFormat::Type::kText;
  po.stop_sequences = s.stop;
  po.stream = req.options.stream;
  po.include_usage = req.options.include_usage;
  po.model = out.requested_model;
  po.control_tokens = config.control_tokens;
  auto constraint = engine_constraint(out, config.encoding);
  if (!constraint.is_ok()) return as_api_error(protocol, constraint.status());
  out.engine.constraint = std::move(constraint).value();
  out.conversation = std::move(req.conversation);
  return out;
}

}  // namespace di::recipe
