// OutputParser: the order of things on one stream — opening events once, parsed events as they
// come, exactly one terminal (finish or error), nothing after it.
#include "recipe/protocol/output_parser.h"

#include <algorithm>
#include <ctime>
#include <random>

#include "base/utf8.h"

namespace di::recipe {
namespace {

ParserOptions with_identity(ParserOptions o) {
  if (o.request_id.empty()) {
    std::random_device rd;
    std::mt19937_64 rng((uint64_t(rd()) << 32) ^ rd());
    static const char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 24; ++i) o.request_id.push_back(kHex[rng() & 15]);
  }
  if (o.created == 0) o.created = static_cast<int64_t>(std::time(nullptr));
  return o;
}

}  // namespace

OutputParser::OutputParser(ParserOptions options, TokenDecoder decoder)
    : options_(with_identity(std::move(options))),
      decoder_(decoder),
      stream_(options_, std::move(decoder)),
      generator_(make_event_generator(options_)) {}

void OutputParser::ensure_started(std::vector<SseEvent>* out) {
  if (started_) return;
  started_ = true;
  generator_->start(usage_, out);
}

void OutputParser::forward(std::vector<SseEvent>* out) {
  for (const ParsedEvent& e : parsed_) generator_->on_event(e, out);
  parsed_.clear();
}

void OutputParser::push(const OutputChunk& chunk, std::vector<SseEvent>* out) {
  if (done_) return;
  if (chunk.prompt_tokens >= 0) usage_.prompt_tokens = chunk.prompt_tokens;
  if (chunk.cached_prompt_tokens >= 0) usage_.cached_prompt_tokens = chunk.cached_prompt_tokens;
  if (chunk.completion_tokens >= 0) {
    // Text without ids: the chunk's tokens are reasoning when the output was in reasoning
    // before it (exact for one token per chunk, as engines stream).
    const int64_t grown = chunk.completion_tokens - usage_.completion_tokens;
    if (chunk.token_ids.empty() && grown > 0 && !stream_.stopped() && stream_.in_reasoning())
      text_reasoning_tokens_ += grown;
    usage_.completion_tokens = chunk.completion_tokens;
    completion_known_ = true;
  }
  ensure_started(out);
  if (!stream_.stopped()) {
    // Tokens after a stop sequence were not part of the answer and do not count.
    ids_seen_ += static_cast<int64_t>(chunk.token_ids.size());
    if (!chunk.logprobs.empty()) forward_logprobs(chunk);
    if (chunk.token_ids.empty()) stream_.push_text(chunk.text, &parsed_);
    else stream_.push_tokens(chunk.token_ids, chunk.text, &parsed_);
    forward(out);
  }
  switch (chunk.finish) {
    case OutputFinish::kNone: break;
    case OutputFinish::kStop: end(EngineFinish::kStop, out); break;
    case OutputFinish::kLength: end(EngineFinish::kLength, out); break;
    case OutputFinish::kStopSequence: end(EngineFinish::kStopSequence, out); break;
    case OutputFinish::kContentFilter: end(EngineFinish::kContentFilter, out); break;
    case OutputFinish::kCancelled:
      fail(Status::cancelled("the request was cancelled"), out);
      break;
    case OutputFinish::kError:
      fail(Status::internal(chunk.error_message.empty() ? std::string("the engine failed")
                                                        : std::string(chunk.error_message)),
           out);
      break;
  }
}

void OutputParser::forward_logprobs(const OutputChunk& chunk) {
  auto entry = [&](int32_t id, float logprob) {
    const std::string bytes = decoder_ ? decoder_(id).value_or("") : std::string();
    nlohmann::json raw = nlohmann::json::array();
    for (unsigned char b : bytes) raw.push_back(b);
    // A token may hold part of a UTF-8 character: `token` is its text made valid, `bytes` exact.
    return nlohmann::json{{"token", utf8_lossy(bytes)}, {"logprob", logprob}, {"bytes", std::move(raw)}};
  };
  nlohmann::json entries = nlohmann::json::array();
  const size_t n = std::min(chunk.logprobs.size(), chunk.token_ids.size());
  const uint32_t k = chunk.num_top_logprobs;
  for (size_t i = 0; i < n; ++i) {
    nlohmann::json e = entry(chunk.token_ids[i], chunk.logprobs[i]);
    nlohmann::json top = nlohmann::json::array();
    for (uint32_t j = 0; k > 0 && j < k && (i + 1) * k <= chunk.top_logprob_ids.size(); ++j)
      top.push_back(entry(chunk.top_logprob_ids[i * k + j], chunk.top_logprobs[i * k + j]));
    e["top_logprobs"] = std::move(top);
    entries.push_back(std::move(e));
  }
  generator_->on_logprobs(std::move(entries));
}

void OutputParser::finish(std::vector<SseEvent>* out) {
  if (done_) return;
  end(EngineFinish::kNone, out);
}

void OutputParser::end(EngineFinish engine, std::vector<SseEvent>* out) {
  ensure_started(out);
  FinishInfo info = stream_.finish(engine, &parsed_);
  forward(out);
  if (!completion_known_) usage_.completion_tokens = ids_seen_;
  usage_.reasoning_tokens = std::min(usage_.completion_tokens,
                                     stream_.reasoning_tokens() + text_reasoning_tokens_);
  info.usage = usage_;
  generator_->finish(info, out);
  done_ = true;
}

void OutputParser::fail(const Status& status, std::vector<SseEvent>* out) {
  if (done_) return;
  ensure_started(out);
  ApiError error = api_error_from_status(options_.protocol, status);
  if (status.code() == StatusCode::kCancelled) error.code = "cancelled";
  generator_->fail(error, out);
  error_body_ = error.body();
  done_ = failed_ = true;
}

nlohmann::json OutputParser::response() const {
  return failed_ ? error_body_ : generator_->response();
}

}  // namespace di::recipe
