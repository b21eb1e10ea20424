// Legacy completions request fields. Field names and defaults follow OpenAI's API reference for
// POST /v1/completions; the sampling extras vLLM's server accepts there (top_k, min_p,
// repetition_penalty, min_tokens, ignore_eos, stop_token_ids, ...) pass through to the engine.
#include "server/completions_request.h"

#include "deepinfer.h"

namespace di::server {
namespace {

using nlohmann::json;

ApiError bad(const std::string& param, const std::string& message) {
  return bad_request(Protocol::kChatCompletions, param, param + ": " + message);
}

std::string type_of(const json& j) {
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "null";
}

bool is_id(const json& j) {
  return j.is_number_integer() && j.get<int64_t>() >= 0 && j.get<int64_t>() <= INT32_MAX;
}

// prompt: a string, an array of token ids, or a one-element array of either.
std::optional<ApiError> read_prompt(const json& p, CompletionsRequest* out) {
  if (p.is_string()) {
    out->prompt_text = p.get<std::string>();
    return std::nullopt;
  }
  if (!p.is_array() || p.empty())
    return bad("prompt", "expected a string, an array of token ids or an array of one of them, got " +
                             (p.is_array() ? std::string("an empty array") : type_of(p)));
  if (p[0].is_string() || p[0].is_array()) {
    if (p.size() > 1)
      return bad("prompt", "a batch of " + std::to_string(p.size()) +
                               " prompts is not supported; send one prompt per request");
    return read_prompt(p[0], out);
  }
  for (size_t i = 0; i < p.size(); ++i) {
    if (!is_id(p[i]))
      return bad("prompt[" + std::to_string(i) + "]", "expected a token id (integer >= 0), got " + p[i].dump());
    out->prompt_ids.push_back(static_cast<int32_t>(p[i].get<int64_t>()));
  }
  return std::nullopt;
}

// The sampling keys a body passes to the engine as they are: every sampling key of
// di_options_schema (so a new sampling field needs no change here) but the structured-output ones
// (this API has none) and those read by hand below. The engine checks their values.
const std::vector<std::string>& passed_sampling_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> v;
    for (const json& k : json::parse(di_options_schema())) {
      const std::string key = k.at("key");
      if (k.at("scope") != "sampling" || key.rfind("constraint_", 0) == 0) continue;
      if (key == "n" || key == "ignore_eos" || key == "stop" || key == "logprobs" || key == "top_logprobs") continue;
      v.push_back(key);
    }
    return v;
  }();
  return keys;
}

}  // namespace

std::optional<ApiError> parse_completions_request(const std::string& body, CompletionsRequest* out) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return bad_request(Protocol::kChatCompletions, "",
                                 "the request body must be a JSON object");
  auto field = [&](const char* k) -> const json* {
    auto it = j.find(k);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  const json* model = field("model");
  if (model == nullptr) return bad("model", "required");
  if (!model->is_string()) return bad("model", "expected a string, got " + type_of(*model));
  out->model = model->get<std::string>();
  const json* prompt = field("prompt");
  if (prompt == nullptr) return bad("prompt", "required");
  if (auto e = read_prompt(*prompt, out)) return e;

  auto boolean = [&](const char* k, bool* v) -> std::optional<ApiError> {
    if (const json* f = field(k)) {
      if (!f->is_boolean()) return bad(k, "expected a boolean, got " + type_of(*f));
      *v = f->get<bool>();
    }
    return std::nullopt;
  };
  if (auto e = boolean("stream", &out->stream)) return e;
  if (auto e = boolean("echo", &out->echo)) return e;
  if (const json* so = field("stream_options")) {
    if (!so->is_object()) return bad("stream_options", "expected an object, got " + type_of(*so));
    if (auto it = so->find("include_usage"); it != so->end() && !it->is_null()) {
      if (!it->is_boolean()) return bad("stream_options.include_usage", "expected a boolean, got " + type_of(*it));
      out->include_usage = it->get<bool>();
    }
  }
  if (const json* s = field("suffix"))
    return bad("suffix", "insertion (a suffix) is not supported, got " + s->dump());

  json& sp = out->sampling;
  sp["max_tokens"] = 16;  // OpenAI's default for this API
  for (const std::string& k : passed_sampling_keys())
    if (const json* f = field(k.c_str())) sp[k] = *f;
  if (const json* f = field("ignore_eos")) {
    if (!f->is_boolean()) return bad("ignore_eos", "expected a boolean, got " + type_of(*f));
    sp["ignore_eos"] = f->get<bool>() ? 1 : 0;
  }
  if (const json* f = field("n")) {
    if (!f->is_number_integer() || f->get<int64_t>() < 1 || f->get<int64_t>() > 128)
      return bad("n", "expected an integer 1..128, got " + f->dump());
    out->n = static_cast<uint32_t>(f->get<int64_t>());
    sp["n"] = out->n;
  }
  if (const json* f = field("best_of")) {
    if (!f->is_number_integer() || f->get<int64_t>() != out->n)
      return bad("best_of", "only best_of = n is supported (every sampled completion is returned), got " + f->dump());
  }
  if (const json* f = field("stop")) {
    json stop = f->is_string() ? json::array({*f}) : *f;
    if (!stop.is_array()) return bad("stop", "expected a string or an array of strings, got " + type_of(*f));
    for (size_t i = 0; i < stop.size(); ++i)
      if (!stop[i].is_string() || stop[i].get<std::string>().empty())
        return bad("stop[" + std::to_string(i) + "]", "expected a non-empty string, got " + stop[i].dump());
    if (!stop.empty()) sp["stop"] = stop;
  }
  if (const json* f = field("logprobs")) {
    // An integer: the sampled token's log-probability plus that many alternatives (OpenAI allows
    // up to 5; the engine's limit, 20, as vLLM).
    if (!f->is_number_integer() || f->get<int64_t>() < 0 || f->get<int64_t>() > 20)
      return bad("logprobs", "expected an integer 0..20, got " + f->dump());
    out->logprobs = static_cast<int32_t>(f->get<int64_t>());
    sp["logprobs"] = 1;
    if (out->logprobs > 0) sp["top_logprobs"] = out->logprobs;
    if (out->echo)
      return bad("logprobs", "with echo it needs the prompt's log-probabilities, which this server does not compute");
  }
  return std::nullopt;
}

}  // namespace di::server
