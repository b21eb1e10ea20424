// ChatChoices: index rewriting and usage summing over the parsers' Chat Completions JSON.
#include "server/chat_choices.h"

namespace di::server {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Adds `from`'s completion-side counts to `into`; the prompt was the same for every choice.
void add_usage(json& into, const json& from) {
  if (!into.is_object() || !from.is_object()) return;
  const int64_t completion = into.value("completion_tokens", int64_t{0}) + from.value("completion_tokens", int64_t{0});
  into["completion_tokens"] = completion;
  into["total_tokens"] = into.value("prompt_tokens", int64_t{0}) + completion;
  if (into.contains("completion_tokens_details") && into["completion_tokens_details"].is_object() &&
      from.contains("completion_tokens_details") && from["completion_tokens_details"].is_object()) {
    json& d = into["completion_tokens_details"];
    d["reasoning_tokens"] = d.value("reasoning_tokens", int64_t{0}) +
                            from["completion_tokens_details"].value("reasoning_tokens", int64_t{0});
  }
}

bool is_error(const json& j) { return j.is_object() && j.contains("error"); }

}  // namespace

bool ChatChoiceStream::on_event(uint32_t index, std::string_view data, const Emit& emit) {
  if (failed_ || data == "[DONE]") return true;
  json j = json::parse(data, nullptr, false);
  if (is_error(j)) {
    failed_ = true;
    return emit(data);
  }
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array()) return emit(data);
  if (j["choices"].empty() && j.contains("usage") && j["usage"].is_object()) {
    if (usage_chunk_.is_null()) usage_chunk_ = std::move(j);
    else add_usage(usage_chunk_["usage"], j["usage"]);
    return true;
  }
  for (json& choice : j["choices"]) choice["index"] = index;
  return emit(dump(j));
}

bool ChatChoiceStream::finish(const Emit& emit) {
  if (failed_) return true;
  if (!usage_chunk_.is_null() && !emit(dump(usage_chunk_))) return false;
  return emit("[DONE]");
}

std::string join_chat_responses(const std::vector<std::string>& bodies) {
  json joined;
  for (size_t i = 0; i < bodies.size(); ++i) {
    json j = json::parse(bodies[i], nullptr, false);
    if (is_error(j) || !j.is_object()) return bodies[i];
    json choice = j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() ? j["choices"][0] : json::object();
    choice["index"] = i;
    if (i == 0) {
      joined = std::move(j);
      joined["choices"] = json::array({std::move(choice)});
    } else {
      joined["choices"].push_back(std::move(choice));
      if (j.contains("usage")) add_usage(joined["usage"], j["usage"]);
    }
  }
  return joined.is_null() ? "{}" : dump(joined);
}

}  // namespace di::server
