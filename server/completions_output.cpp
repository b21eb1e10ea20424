// Legacy completion objects, shaped as OpenAI's API reference for POST /v1/completions shows
// them: id "cmpl-…", object "text_completion", choices[{index, text, logprobs, finish_reason}].
#include "server/completions_output.h"

#include <ctime>
#include <random>

#include "base/utf8.h"

namespace di::server {

using nlohmann::json;

const char* completions_finish_reason(int32_t finish) {
  switch (finish) {
    case DI_FINISH_STOP:
    case DI_FINISH_STOP_SEQUENCE: return "stop";
    case DI_FINISH_LENGTH: return "length";
    default: return "";
  }
}

namespace {

// Characters (code points), which is how OpenAI's API and vLLM count text_offset.
size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string random_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string s = "cmpl-";
  for (int i = 0; i < 24; ++i) s.push_back(kHex[rng() % 16]);
  return s;
}

}  // namespace

CompletionsOutput::CompletionsOutput(std::string model, uint32_t n, int32_t logprobs,
                                     const di_tokenizer* tokenizer, std::string echo_text)
    : id_(random_id()),
      created_(static_cast<int64_t>(std::time(nullptr))),
      model_(std::move(model)),
      logprobs_(logprobs),
      tokenizer_(tokenizer),
      echo_(std::move(echo_text)),
      choices_(n) {
  for (Choice& c : choices_) {
    c.text = echo_;
    if (logprobs_ >= 0)
      c.logprobs = {{"tokens", json::array()}, {"token_logprobs", json::array()},
                    {"top_logprobs", json::array()}, {"text_offset", json::array()}};
  }
}

json CompletionsOutput::envelope(json choices) const {
  return {{"id", id_}, {"object", "text_completion"}, {"created", created_}, {"model", model_},
          {"system_fingerprint", nullptr}, {"choices", std::move(choices)}};
}

// The chunk's tokens in the legacy shape. A token is spelled by its own bytes (made valid UTF-8:
// a token may hold part of a character); text_offset is where the token starts in the choice's
// text, in characters, as far as the decoded text has reached.
json CompletionsOutput::chunk_logprobs(Choice& choice, const di_chunk& c, size_t text_start) {
  json lp = {{"tokens", json::array()}, {"token_logprobs", json::array()},
             {"top_logprobs", json::array()}, {"text_offset", json::array()}};
  auto spell = [&](int32_t id) {
    char* bytes = nullptr;
    size_t len = 0;
    if (tokenizer_ == nullptr || di_tokenizer_token_to_piece(tokenizer_, id, &bytes, &len, nullptr) != DI_OK)
      return std::string();
    std::string s = utf8_lossy(std::string_view(bytes, len));
    di_free(bytes);
    return s;
  };
  size_t offset = code_points(std::string_view(choice.text).substr(0, text_start));
  const size_t total = code_points(choice.text);
  for (size_t i = 0; i < c.num_tokens; ++i) {
    const std::string tok = spell(c.token_ids[i]);
    lp["tokens"].push_back(tok);
    lp["token_logprobs"].push_back(c.logprobs != nullptr ? json(c.logprobs[i]) : json(nullptr));
    if (logprobs_ > 0 && c.top_logprobs != nullptr) {
      json top = json::object();
      for (uint32_t k = 0; k < c.num_top_logprobs && k < static_cast<uint32_t>(logprobs_); ++k) {
        const size_t at = i * c.num_top_logprobs + k;
        const std::string alt = spell(c.top_logprob_ids[at]);
        if (!top.contains(alt)) top[alt] = c.top_logprobs[at];  // two ids may spell alike
      }
      lp["top_logprobs"].push_back(std::move(top));
    } else {
      lp["top_logprobs"].push_back(nullptr);
    }
    lp["text_offset"].push_back(std::min(offset, total));
    offset += code_points(tok);
  }
  for (const char* k : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
    for (const json& v : lp[k]) choice.logprobs[k].push_back(v);
  return lp;
}

json CompletionsOutput::on_chunk(const di_chunk& c) {
  if (c.index >= choices_.size()) return nullptr;
  Choice& choice = choices_[c.index];
  prompt_tokens_ = c.prompt_tokens;
  choice.completion_tokens = c.completion_tokens;
  const size_t text_start = choice.text.size();
  std::string delta = choice.started ? std::string() : echo_;  // the stream sends the echo first
  choice.started = true;
  delta.append(c.text, c.text_len);
  choice.text.append(c.text, c.text_len);
  json lp = logprobs_ >= 0 && c.num_tokens > 0 ? chunk_logprobs(choice, c, text_start) : json(nullptr);
  const char* reason = completions_finish_reason(c.finish_reason);
  if (*reason != '\0') choice.finish_reason = reason;
  if (delta.empty() && lp.is_null() && *reason == '\0') return nullptr;
  return envelope(json::array({{{"index", c.index}, {"text", delta}, {"logprobs", lp},
                                {"finish_reason", *reason ? json(reason) : json(nullptr)}}}));
}

json CompletionsOutput::usage() const {
  int64_t completion = 0;
  for (const Choice& c : choices_) completion += c.completion_tokens;
  return {{"prompt_tokens", prompt_tokens_}, {"completion_tokens", completion},
          {"total_tokens", prompt_tokens_ + completion}};
}

json CompletionsOutput::usage_chunk() const {
  json c = envelope(json::array());
  c["usage"] = usage();
  return c;
}

json CompletionsOutput::response() const {
  json choices = json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    choices.push_back({{"index", i}, {"text", c.text}, {"logprobs", c.logprobs},
                       {"finish_reason", c.finish_reason.empty() ? json(nullptr) : json(c.finish_reason)}});
  }
  json body = envelope(std::move(choices));
  body["usage"] = usage();
  return body;
}

bool CompletionsOutput::finished() const {
  for (const Choice& c : choices_)
    if (c.finish_reason.empty()) return false;
  return true;
}

}  // namespace di::server
