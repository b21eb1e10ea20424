// The C ABI's Recipe section: di_recipe (configuration + tokenizer) and di_prepared (one
// prepared request). Thin: all behaviour lives in recipe/prepare; this file converts types and
// catches everything.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "capi/src/engine_options.h"
#include "capi/src/options.h"
#include "capi/src/prepared_handle.h"
#include "capi/src/recipe_options.h"
#include "recipe/chat_template/model_chat_template.h"
#include "recipe/protocol/model_aliases.h"
#include "recipe/tokenizer/tokenizer_cache.h"

namespace di::capi {
namespace {

using json = nlohmann::json;

const char* out_str(const di_prepared* p, const std::string di_prepared::*field, size_t* len) {
  if (p == nullptr) {
    if (len) *len = 0;
    return "";
  }
  const std::string& s = p->*field;
  if (len) *len = s.size();
  return s.c_str();
}

json image_json(const recipe::ImageRef& r) {
  json j;
  switch (r.kind) {
    case recipe::ImageRef::Kind::kUrl: j["kind"] = "url"; j["url"] = r.url; break;
    case recipe::ImageRef::Kind::kDataUrl: j["kind"] = "data_url"; j["url"] = r.url; break;
    case recipe::ImageRef::Kind::kBase64: j["kind"] = "base64"; j["data"] = r.data; break;
  }
  if (!r.media_type.empty()) j["media_type"] = r.media_type;
  if (!r.detail.empty()) j["detail"] = r.detail;
  return j;
}

void fill_views(di_prepared& d) {
  const recipe::Prepared& p = d.p;
  d.sampling = sampling_options_json(p.engine.sampling);
  d.stop = json(p.stop_sequences).dump();
  json c;
  switch (p.constraint.kind) {
    case recipe::OutputConstraint::Kind::kNone: c = {{"type", "none"}}; break;
    case recipe::OutputConstraint::Kind::kJsonObject: c = {{"type", "json_object"}}; break;
    case recipe::OutputConstraint::Kind::kJsonSchema:
      c = {{"type", "json_schema"}, {"name", p.constraint.name}, {"strict", p.constraint.strict},
           {"schema", json::parse(p.constraint.schema.dump())}};
      break;
  }
  d.constraint = c.dump();
  d.parser = recipe::parser_options_to_json(p.parser).dump();
  json imgs = json::array();
  for (size_t i = 0; i < p.images.size(); ++i) {
    json j = image_json(p.images[i]);
    if (i < p.image_data.size()) {
      const auto& img = p.image_data[i];
      j["width"] = img.width;
      j["height"] = img.height;
      j["num_tokens"] = img.num_tokens;
      j["bytes"] = img.webp.size();
    }
    imgs.push_back(std::move(j));
  }
  d.images = imgs.dump();
  d.info = json{{"model", p.model},
                {"requested_model", p.requested_model},
                {"encoding", p.encoding},
                {"protocol", std::string(recipe::protocol_name(p.protocol))},
                {"prompt_tokens", p.prompt_tokens},
                {"image_tokens", p.image_tokens},
                {"thinking", p.conversation.thinking}}
               .dump();
  for (const auto& r : p.special_ranges) {
    d.ranges.push_back(r.begin);
    d.ranges.push_back(r.end);
  }
}

}  // namespace
}  // namespace di::capi

extern "C" {

DI_API di_status di_recipe_create(const char* tokenizer_path, size_t path_len,
                                  const di_options* options, di_recipe** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(out, err);
  if (tokenizer_path == nullptr && path_len > 0)
    return di::capi::fail(err, DI_E_INVALID_ARG, "tokenizer_path: NULL with a non-zero length");
  auto r = std::make_unique<di_recipe>();
  // A recipe made on a model directory serves it under the folder's name by default, the name
  // `deepinfer serve` gives it; without one, "deepseek-v4".
  const std::string default_model =
      path_len > 0 ? di::recipe::ModelAliases::name_for_model_path(std::string(tokenizer_path, path_len))
                   : std::string("deepseek-v4");
  if (auto st = di::capi::read_recipe_config(options, r->config, default_model); !st.is_ok())
    return di::capi::fail(err, st);
  if (path_len > 0) {
    auto tok = di::recipe::load_shared_tokenizer(std::string(tokenizer_path, path_len));
    if (!tok.is_ok()) return di::capi::fail(err, tok.status());
    std::shared_ptr<const di::recipe::Tokenizer> t = std::move(tok).value();
    r->vocab = t;
    // Llama / Qwen directories render with their own chat template (DeepSeek ones keep ours).
    std::optional<std::string> encoding;
    if (options != nullptr) {
      auto it = options->values.find("recipe_encoding");
      if (it != options->values.end()) encoding = std::get<std::string>(it->second.v);
    }
    auto tmpl = di::recipe::chat_template::recipe_chat_template(std::string(tokenizer_path, path_len), encoding);
    if (!tmpl.is_ok()) return di::capi::fail(err, tmpl.status());
    r->config.chat_template = std::move(tmpl).value();
    auto id = [&](std::string_view s) { return t->token_to_id(s).value_or(-1); };
    r->config.control_tokens.think_start = id("<think>");
    r->config.control_tokens.think_end = id("</think>");
    r->config.control_tokens.dsml = id("｜DSML｜");
    r->config.control_tokens.eos = t->eos_id().value_or(id("<｜end▁of▁sentence｜>"));
    r->tokenizer = [t](const di::recipe::RenderedPrompt& prompt)
        -> di::Result<di::recipe::TokenizedPrompt> {
      std::vector<di::recipe::Segment> segs;
      segs.reserve(prompt.segments.size());
      for (const auto& s : prompt.segments) segs.push_back({s.text, s.special});
      DI_ASSIGN_OR_RETURN(di::recipe::SegmentedIds enc, t->encode_segments(segs));
      di::recipe::TokenizedPrompt out;
      out.ids = std::move(enc.ids);
      for (const auto& r : enc.special_ranges) out.special_ranges.push_back({r.begin, r.end});
      return out;
    };
  } else if (options != nullptr && options->values.count("recipe_encoding") &&
             std::get<std::string>(options->values.at("recipe_encoding").v) == "chat_template") {
    return di::capi::fail(err, DI_E_INVALID_ARG, "recipe_encoding \"chat_template\": needs a model directory");
  }
  *out = r.release();
  return DI_OK;
  DI_API_END(err)
}

DI_API void di_recipe_destroy(di_recipe* recipe) { delete recipe; }

DI_API di_status di_recipe_prepare(const di_recipe* recipe, int32_t protocol, const char* json,
                                   size_t len, di_prepared** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(recipe, err);
  DI_REQUIRE_ARG(out, err);
  if (json == nullptr && len > 0)
    return di::capi::fail(err, DI_E_INVALID_ARG, "json: NULL with a non-zero length");
  di::recipe::Protocol p;
  switch (protocol) {
    case DI_PROTOCOL_CHAT_COMPLETIONS: p = di::recipe::Protocol::kChatCompletions; break;
    case DI_PROTOCOL_RESPONSES: p = di::recipe::Protocol::kResponses; break;
    case DI_PROTOCOL_MESSAGES: p = di::recipe::Protocol::kMessages; break;
    default:
      return di::capi::fail(err, DI_E_INVALID_ARG,
                            "protocol: expected DI_PROTOCOL_CHAT_COMPLETIONS, DI_PROTOCOL_RESPONSES "
                            "or DI_PROTOCOL_MESSAGES, got " + std::to_string(protocol));
  }
  auto prepared = di::recipe::prepare(recipe->config, recipe->tokenizer, p,
                                      std::string_view(json == nullptr ? "" : json, len));
  if (!prepared.is_ok()) return di::capi::fail(err, prepared.status());
  auto d = std::make_unique<di_prepared>();
  d->p = std::move(prepared).value();
  d->vocab = recipe->vocab;
  di::capi::fill_views(*d);
  *out = d.release();
  return DI_OK;
  DI_API_END(err)
}

DI_API void di_prepared_destroy(di_prepared* prepared) { delete prepared; }

DI_API const char* di_prepared_prompt(const di_prepared* prepared, size_t* len) {
  if (prepared == nullptr) {
    if (len) *len = 0;
    return "";
  }
  if (len) *len = prepared->p.prompt.size();
  return prepared->p.prompt.c_str();
}

DI_API const int32_t* di_prepared_token_ids(const di_prepared* prepared, size_t* count) {
  if (prepared == nullptr || prepared->p.ids.empty()) {
    if (count) *count = 0;
    return nullptr;
  }
  if (count) *count = prepared->p.ids.size();
  return prepared->p.ids.data();
}

DI_API const uint32_t* di_prepared_special_ranges(const di_prepared* prepared, size_t* count) {
  if (prepared == nullptr || prepared->ranges.empty()) {
    if (count) *count = 0;
    return nullptr;
  }
  if (count) *count = prepared->ranges.size() / 2;
  return prepared->ranges.data();
}

DI_API const char* di_prepared_sampling_json(const di_prepared* prepared, size_t* len) {
  return di::capi::out_str(prepared, &di_prepared::sampling, len);
}
DI_API const char* di_prepared_stop_sequences_json(const di_prepared* prepared, size_t* len) {
  return di::capi::out_str(prepared, &di_prepared::stop, len);
}
DI_API int32_t di_prepared_stream(const di_prepared* prepared) {
  return prepared != nullptr && prepared->p.stream ? 1 : 0;
}
DI_API const char* di_prepared_constraint_json(const di_prepared* prepared, size_t* len) {
  return di::capi::out_str(prepared, &di_prepared::constraint, len);
}
DI_API const char* di_prepared_parser_options_json(const di_prepared* prepared, size_t* len) {
  return di::capi::out_str(prepared, &di_prepared::parser, len);
}
DI_API const char* di_prepared_images_json(const di_prepared* prepared, size_t* len) {
  return di::capi::out_str(prepared, &di_prepared::images, len);
}
DI_API const uint8_t* di_prepared_image_data(const di_prepared* prepared, size_t index,
                                             size_t* len) {
  if (prepared == nullptr || index >= prepared->p.image_data.size()) {
    if (len) *len = 0;
    return nullptr;
  }
  const auto& webp = prepared->p.image_data[index].webp;
  if (len) *len = webp.size();
  return webp.data();
}
DI_API const char* di_prepared_info_json(const di_prepared* prepared, size_t* len) {
  return di::capi::out_str(prepared, &di_prepared::info, len);
}

}  // extern "C"
