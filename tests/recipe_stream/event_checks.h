// Test helper: checks an event sequence against each API's documented stream shape (recipe-spec
// §5: order, required fields, indexes, sequence numbers, exactly one terminal event), and folds
// the events back into what a client would see, to compare with the non-streaming body.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/protocol/event_generator.h"

namespace di::recipe::testing {

using nlohmann::json;

// What a client ends up with, whatever the API.
struct ClientView {
  std::string reasoning, content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments text
  std::string finish;  // the API's own finish/stop reason or status
  bool operator==(const ClientView& o) const {
    return reasoning == o.reasoning && content == o.content && calls == o.calls && finish == o.finish;
  }
};

inline std::string check_fail(const std::string& what, size_t i) {
  return "event " + std::to_string(i) + ": " + what;
}

// Event i of a typed stream (Responses, Messages): its data into *d and its "type", which must be
// the event's SSE name, into *type. "" or what is wrong.
inline std::string parse_typed_event(const std::vector<SseEvent>& ev, size_t i, json* d, std::string* type) {
  *d = json::parse(ev[i].data, nullptr, false);
  if (d->is_discarded()) return check_fail("data is not JSON", i);
  *type = (*d)["type"];
  if (*type != ev[i].name) return check_fail("event name differs from type", i);
  return "";
}

// Returns "" when the sequence is well-formed, else what is wrong; fills *view.
inline std::string check_chat(const std::vector<SseEvent>& ev, bool include_usage, ClientView* view) {
  if (ev.empty()) return "no events";
  bool finished = false, usage_seen = false;
  std::string id;
  for (size_t i = 0; i < ev.size(); ++i) {
    const SseEvent& e = ev[i];
    if (!e.name.empty()) return check_fail("chat events have no name", i);
    if (e.data == "[DONE]") {
      if (i + 1 != ev.size()) return check_fail("[DONE] is not last", i);
      if (!finished) return check_fail("[DONE] before a finish_reason", i);
      if (include_usage && !usage_seen) return check_fail("no usage chunk", i);
      return "";
    }
    json d = json::parse(e.data, nullptr, false);
    if (d.is_discarded()) return check_fail("data is not JSON", i);
    if (d.contains("error")) return i + 1 == ev.size() ? "" : check_fail("error is not last", i);
    if (d["object"] != "chat.completion.chunk") return check_fail("object", i);
    if (id.empty()) id = d["id"];
    if (d["id"] != id) return check_fail("id changed", i);
    if (include_usage != d.contains("usage")) return check_fail("usage key presence", i);
    if (d["choices"].empty()) {
      if (!finished || !include_usage || !d["usage"].is_object()) return check_fail("usage chunk", i);
      usage_seen = true;
      continue;
    }
    if (finished) return check_fail("choice after finish", i);
    const json& c = d["choices"][0];
    if (c["index"] != 0 || !c.contains("logprobs")) return check_fail("choice shape", i);
    const json& delta = c["delta"];
    if (i == 0 && delta["role"] != "assistant") return check_fail("first delta has no role", i);
    if (delta.contains("reasoning_content") && delta["reasoning_content"].is_string())
      view->reasoning += delta["reasoning_content"].get<std::string>();
    if (delta.contains("content") && delta["content"].is_string())
      view->content += delta["content"].get<std::string>();
    if (delta.contains("tool_calls")) {
      for (const json& tc : delta["tool_calls"]) {
        const size_t index = tc["index"];
        if (tc.contains("id")) {
          if (index != view->calls.size()) return check_fail("tool call index", i);
          if (tc["type"] != "function" || !tc["function"]["name"].is_string())
            return check_fail("tool call start shape", i);
          view->calls.push_back({tc["function"]["name"], tc["function"]["arguments"]});
        } else {
          if (index + 1 != view->calls.size()) return check_fail("arguments for a closed call", i);
          view->calls[index].second += tc["function"]["arguments"].get<std::string>();
        }
      }
    }
    if (!c["finish_reason"].is_null()) {
      finished = true;
      view->finish = c["finish_reason"];
    }
  }
  return "stream does not end with [DONE] or an error";
}

inline std::string check_responses(const std::vector<SseEvent>& ev, ClientView* view) {
  int64_t expect_seq = 0;
  bool open = false;
  std::string open_id, open_type;
  size_t n_items = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    json d;
    std::string t;
    if (std::string bad = parse_typed_event(ev, i, &d, &t); !bad.empty()) return bad;
    if (d["sequence_number"] != expect_seq++) return check_fail("sequence_number", i);
    if (i == 0 && t != "response.created") return check_fail("first is not response.created", i);
    if (i == 1 && t != "response.in_progress") return check_fail("second is not in_progress", i);
    const bool terminal = t == "response.completed" || t == "response.incomplete" ||
                          t == "response.failed";
    if (terminal) {
      if (i + 1 != ev.size()) return check_fail("terminal is not last", i);
      if (open) return check_fail("item still open at the end", i);
      if (d["response"]["output"].size() != n_items) return check_fail("output size", i);
      view->finish = d["response"]["status"];
      return "";
    }
    // A failed response ends with response.failed alone, as OpenAI's API does.
    if (t == "error") return check_fail("an error event (failures end with response.failed)", i);
    if (t == "response.output_item.added") {
      if (open) return check_fail("item added while another is open", i);
      if (d["output_index"] != n_items) return check_fail("output_index", i);
      open = true;
      open_id = d["item"]["id"];
      open_type = d["item"]["type"];
      if (open_type == "function_call") {
        std::string name = d["item"]["name"];
        if (d["item"].contains("namespace")) name = d["item"]["namespace"].get<std::string>() + "::" + name;
        view->calls.push_back({name, ""});
      } else if (open_type == "custom_tool_call") {
        if (d["item"]["input"] != "" || !d["item"]["call_id"].is_string())
          return check_fail("custom_tool_call added shape", i);
        view->calls.push_back({d["item"]["name"], ""});
      }
      continue;
    }
    if (t == "response.created" || t == "response.in_progress") continue;
    const json& item_id = t == "response.output_item.done" ? d["item"]["id"] : d["item_id"];
    if (!open || item_id != open_id || d["output_index"] != n_items)
      return check_fail(t + " outside its item", i);
    if (t == "response.output_item.done") {
      if (d["item"]["status"] == "in_progress") return check_fail("done item in progress", i);
      open = false;
      ++n_items;
    } else if (t == "response.reasoning_text.delta") {
      if (open_type != "reasoning") return check_fail("reasoning delta in " + open_type, i);
      view->reasoning += d["delta"].get<std::string>();
    } else if (t == "response.output_text.delta") {
      if (open_type != "message") return check_fail("text delta in " + open_type, i);
      view->content += d["delta"].get<std::string>();
    } else if (t == "response.function_call_arguments.delta") {
      if (open_type != "function_call") return check_fail("arguments delta in " + open_type, i);
      view->calls.back().second += d["delta"].get<std::string>();
    } else if (t == "response.function_call_arguments.done") {
      if (d["arguments"] != view->calls.back().second) return check_fail("arguments.done text", i);
    } else if (t == "response.custom_tool_call_input.delta") {
      if (open_type != "custom_tool_call") return check_fail("input delta in " + open_type, i);
      view->calls.back().second += d["delta"].get<std::string>();
    } else if (t == "response.custom_tool_call_input.done") {
      if (d["input"] != view->calls.back().second) return check_fail("input.done text", i);
    } else if (t != "response.content_part.added" && t != "response.content_part.done" &&
               t != "response.output_text.done" && t != "response.reasoning_text.done") {
      return check_fail("unknown event " + t, i);
    }
  }
  return "stream does not end with a terminal event";
}

inline std::string check_messages(const std::vector<SseEvent>& ev, ClientView* view) {
  bool open = false, delta_seen = false;
  std::string open_type;
  size_t next_index = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    json d;
    std::string t;
    if (std::string bad = parse_typed_event(ev, i, &d, &t); !bad.empty()) return bad;
    if (i == 0 && t != "message_start") return check_fail("first is not message_start", i);
    if (t == "error") return i + 1 == ev.size() ? "" : check_fail("error is not last", i);
    if (t == "message_start" || t == "ping") continue;
    if (t == "message_stop") {
      if (i + 1 != ev.size() || !delta_seen) return check_fail("message_stop placement", i);
      return "";
    }
    if (t == "message_delta") {
      if (open) return check_fail("message_delta with an open block", i);
      delta_seen = true;
      view->finish = d["delta"]["stop_reason"];
      if (!d["usage"]["output_tokens"].is_number_integer()) return check_fail("usage", i);
      continue;
    }
    if (delta_seen) return check_fail("block after message_delta", i);
    if (t == "content_block_start") {
      if (open || d["index"] != next_index) return check_fail("block start index", i);
      open = true;
      open_type = d["content_block"]["type"];
      if (open_type == "tool_use") {
        if (!d["content_block"]["id"].is_string()) return check_fail("tool_use id", i);
        view->calls.push_back({d["content_block"]["name"], ""});
      }
      continue;
    }
    if (!open || d["index"] != next_index) return check_fail(t + " outside its block", i);
    if (t == "content_block_stop") {
      open = false;
      ++next_index;
      continue;
    }
    if (t != "content_block_delta") return check_fail("unknown event " + t, i);
    const json& delta = d["delta"];
    const std::string dt = delta["type"];
    if (dt == "thinking_delta" && open_type == "thinking") view->reasoning += delta["thinking"].get<std::string>();
    else if (dt == "signature_delta" && open_type == "thinking") {}
    else if (dt == "text_delta" && open_type == "text") view->content += delta["text"].get<std::string>();
    else if (dt == "input_json_delta" && open_type == "tool_use")
      view->calls.back().second += delta["partial_json"].get<std::string>();
    else return check_fail(dt + " in a " + open_type + " block", i);
  }
  return "stream does not end with message_stop or an error";
}

inline std::string check_events(Protocol p, const std::vector<SseEvent>& ev, bool include_usage,
                                ClientView* view) {
  switch (p) {
    case Protocol::kChatCompletions: return check_chat(ev, include_usage, view);
    case Protocol::kResponses: return check_responses(ev, view);
    case Protocol::kMessages: return check_messages(ev, view);
  }
  return "unknown protocol";
}

// The same view read from the non-streaming body.
inline ClientView view_of_response(Protocol p, const json& r) {
  ClientView v;
  if (p == Protocol::kChatCompletions) {
    const json& m = r["choices"][0]["message"];
    if (m.contains("reasoning_content")) v.reasoning = m["reasoning_content"];
    if (m["content"].is_string()) v.content = m["content"];
    if (m.contains("tool_calls"))
      for (const json& tc : m["tool_calls"]) v.calls.push_back({tc["function"]["name"], tc["function"]["arguments"]});
    v.finish = r["choices"][0]["finish_reason"];
  } else if (p == Protocol::kResponses) {
    for (const json& item : r["output"]) {
      if (item["type"] == "reasoning") v.reasoning += item["content"][0]["text"].get<std::string>();
      if (item["type"] == "message") v.content += item["content"][0]["text"].get<std::string>();
      if (item["type"] == "function_call") {
        std::string name = item["name"];
        if (item.contains("namespace")) name = item["namespace"].get<std::string>() + "::" + name;
        v.calls.push_back({name, item["arguments"]});
      }
      if (item["type"] == "custom_tool_call") v.calls.push_back({item["name"], item["input"]});
    }
    v.finish = r["status"];
  } else {
    for (const json& b : r["content"]) {
      if (b["type"] == "thinking") v.reasoning += b["thinking"].get<std::string>();
      if (b["type"] == "text") v.content += b["text"].get<std::string>();
      if (b["type"] == "tool_use") v.calls.push_back({b["name"], b["input"].dump()});
    }
    v.finish = r["stop_reason"];
  }
  return v;
}

// Consecutive deltas of the same kind merged, volatile fields dropped: the sequence that must not
// depend on how the output was chunked.
inline std::vector<json> normalized(const std::vector<SseEvent>& ev) {
  std::vector<json> out;
  for (const SseEvent& e : ev) {
    json d = e.data == "[DONE]" ? json("[DONE]") : json::parse(e.data);
    if (d.is_object()) {
      d.erase("sequence_number");
      if (d.contains("response")) d["response"].erase("completed_at");
    }
    auto merge_key = [](json& x, const char* k) -> json* {
      return x.contains(k) && x[k].is_string() ? &x[k] : nullptr;
    };
    if (!out.empty() && out.back().is_object() && d.is_object()) {
      json& prev = out.back();
      // Blank the text fields and compare the rest: equal shells mean one delta stream.
      const std::string t = d.value("type", std::string());
      json* pa = nullptr;
      json* pb = nullptr;
      if (t == "response.output_text.delta" || t == "response.reasoning_text.delta" ||
          t == "response.function_call_arguments.delta" ||
          t == "response.custom_tool_call_input.delta") {
        pa = merge_key(prev, "delta");
        pb = merge_key(d, "delta");
      } else if (t == "content_block_delta") {
        for (const char* k : {"text", "thinking", "partial_json"}) {
          if (prev["delta"].contains(k) && d["delta"].contains(k)) {
            pa = &prev["delta"][k];
            pb = &d["delta"][k];
          }
        }
      } else if (d.contains("choices") && !d["choices"].empty() && prev.contains("choices") &&
                 !prev["choices"].empty()) {
        json& da = prev["choices"][0]["delta"];
        json& db = d["choices"][0]["delta"];
        if (da.contains("tool_calls") && db.contains("tool_calls") &&
            !db["tool_calls"][0].contains("id") && !da["tool_calls"][0].contains("id") &&
            da["tool_calls"][0]["index"] == db["tool_calls"][0]["index"]) {
          pa = &da["tool_calls"][0]["function"]["arguments"];
          pb = &db["tool_calls"][0]["function"]["arguments"];
        } else if (!da.contains("role") && !da.contains("tool_calls") && !db.contains("tool_calls") &&
                   prev["choices"][0]["finish_reason"].is_null() &&
                   d["choices"][0]["finish_reason"].is_null()) {
          for (const char* k : {"content", "reasoning_content"}) {
            if (da.contains(k) && db.contains(k) && da[k].is_string() && db[k].is_string()) {
              pa = &da[k];
              pb = &db[k];
            }
          }
        }
      }
      if (pa && pb && pa->is_string() && pb->is_string()) {
        const std::string joined = pa->get<std::string>() + pb->get<std::string>();
        json sa = prev, sb = d;
        *pa = "";
        *pb = "";
        const bool same_shell = prev == d;
        if (same_shell) {
          *pa = joined;
          continue;
        }
        prev = sa;
        d = sb;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace di::recipe::testing
