// `deepinfer generate`: runs prompts (text, token ids, or a JSON Lines batch) through the engine
// via the C ABI — continuous batching, every sampling option, streaming — and prints the
// completions (text, or ids when the model has no tokenizer; JSON with --json / --batch-file).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cli/commands.h"
#include "tools/cli/engine_session.h"
#include "tools/cli/tiny_model.h"
#include "tools/cli/token_ids_arg.h"

namespace di::cli {
namespace {

using nlohmann::json;

void usage() {
  std::printf(
      "usage: deepinfer generate [--model DIR] (--prompt TEXT | --prompt-ids 5,17,... | --batch-file FILE)\n"
      "                          [--stream] [--json] [sampling and engine flags]\n"
      "  Generates with the engine. --model defaults to %s (the bundled tiny model, random\n"
      "  weights; make it with `deepinfer make-tiny-model`). --prompt is tokenized with the model's\n"
      "  tokenizer (BOS added as its tokenizer_config says). --batch-file reads JSON Lines, one\n"
      "  request per line: {\"prompt\": \"...\"} or {\"prompt_ids\": [...]}, plus any sampling keys\n"
      "  (\"max_tokens\", \"temperature\", \"stop\", ...); all lines run together and results print\n"
      "  in input order, one JSON object per line. --stream prints text as it is generated.\n"
      "  --batch-file - reads the lines from standard input.\n"
      "  Without --json the output is the text (ids when the model has no tokenizer).\n"
      "  Defaults: --max-tokens 16 --temperature 0.\n%s",
      default_tiny_model_dir().c_str(), kCommonFlagsHelp);
}

json result_json(const RequestResult& r) {
  json choices = json::array();
  for (size_t i = 0; i < r.choices.size(); ++i) {
    const CompletionResult& c = r.choices[i];
    json o = {{"index", i}, {"ids", c.ids}, {"text", c.text}, {"finish_reason", c.finish_reason}};
    if (!c.logprobs.empty()) o["logprobs"] = c.logprobs;
    if (!c.error.empty()) o["error"] = c.error;
    choices.push_back(std::move(o));
  }
  json j = {{"ids", r.choices[0].ids}, {"text", r.choices[0].text}, {"finish_reason", r.choices[0].finish_reason},
            {"prompt_tokens", r.prompt_tokens}, {"cached_prompt_tokens", r.cached_prompt_tokens}};
  if (r.choices.size() > 1) j["choices"] = std::move(choices);
  else if (!r.choices[0].logprobs.empty()) j["logprobs"] = r.choices[0].logprobs;
  return j;
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  std::string model_dir = default_tiny_model_dir(), prompt, ids_text, batch_file;
  bool have_prompt = false, json_out = false, stream = false;
  json sampling = json::object(), engine_opts = json::object();
  sampling["max_tokens"] = 16;
  sampling["temperature"] = 0;
  const int args_rc = read_command_args(
      argc, argv,
      {"generate", usage,
       [&](const std::string& a) {
         if (a == "--json") json_out = true;
         else if (a == "--stream") stream = true;
         else return false;
         return true;
       },
       [&](const std::string& a, const std::string& v) {
         if (a == "--model") model_dir = v;
         else if (a == "--prompt") { prompt = v; have_prompt = true; }
         else if (a == "--prompt-ids") ids_text = v;
         else if (a == "--batch-file") batch_file = v;
         else return false;
         return true;
       }},
      sampling, engine_opts);
  if (args_rc >= 0) return args_rc;
  if (static_cast<int>(have_prompt) + static_cast<int>(!ids_text.empty()) + static_cast<int>(!batch_file.empty()) != 1) {
    std::fprintf(stderr, "deepinfer generate: give exactly one of --prompt, --prompt-ids, --batch-file\n");
    return 2;
  }
  std::vector<int32_t> ids;
  std::string error;
  if (!ids_text.empty() && !parse_token_ids(ids_text, ids, error)) {
    std::fprintf(stderr, "deepinfer generate: --prompt-ids: %s\n", error.c_str());
    return 2;
  }
  // The batch file is read before the model loads, so a malformed line fails fast.
  std::vector<std::pair<json, json>> batch;  // (prompt or prompt_ids, sampling)
  if (!batch_file.empty()) {
    std::ifstream file;
    if (batch_file != "-") file.open(batch_file);
    std::istream& in = batch_file == "-" ? std::cin : file;
    if (!in) {
      std::fprintf(stderr, "deepinfer generate: --batch-file: cannot open '%s'\n", batch_file.c_str());
      return 2;
    }
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json j = json::parse(line, nullptr, false);
      if (!j.is_object() || (j.contains("prompt") == j.contains("prompt_ids")) ||
          (j.contains("prompt") && !j["prompt"].is_string()) || (j.contains("prompt_ids") && !j["prompt_ids"].is_array())) {
        std::fprintf(stderr, "deepinfer generate: %s:%d: expected {\"prompt\": string} or {\"prompt_ids\": [ids]} plus sampling keys\n",
                     batch_file.c_str(), n);
        return 2;
      }
      json s = sampling;
      json p = j.contains("prompt") ? j["prompt"] : j["prompt_ids"];
      j.erase("prompt");
      j.erase("prompt_ids");
      s.update(j);
      batch.emplace_back(std::move(p), std::move(s));
    }
  }

  auto session = EngineSession::open(model_dir, engine_opts);
  if (!session.is_ok()) {
    std::fprintf(stderr, "deepinfer generate: %s\n", session.status().message().c_str());
    return session.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  EngineSession& s = **session;
  const bool as_text = s.has_tokenizer();

  if (batch_file.empty()) {
    if (have_prompt) {
      auto t = s.encode_text(prompt);
      if (!t.is_ok()) {
        std::fprintf(stderr, "deepinfer generate: %s\n", t.status().message().c_str());
        return 2;
      }
      ids = std::move(t).value();
    }
    const bool streaming = stream && as_text && !json_out;
    auto r = s.run(ids, sampling, [&](const di_chunk& c) {
      if (streaming && c.index == 0 && c.text_len > 0) {
        std::fwrite(c.text, 1, c.text_len, stdout);
        std::fflush(stdout);
      }
    });
    if (!r.is_ok()) {
      std::fprintf(stderr, "deepinfer generate: %s\n", r.status().message().c_str());
      return r.status().code() == StatusCode::kInvalidArgument || r.status().code() == StatusCode::kLimit ? 2 : 1;
    }
    if (json_out) {
      std::printf("%s\n", result_json(*r).dump().c_str());
    } else if (streaming) {
      std::printf("\n");
      for (size_t i = 1; i < r->choices.size(); ++i) std::printf("[%zu] %s\n", i, r->choices[i].text.c_str());
    } else {
      for (size_t i = 0; i < r->choices.size(); ++i) {
        std::string line;
        if (as_text) {
          line = r->choices[i].text;
        } else {
          for (size_t k = 0; k < r->choices[i].ids.size(); ++k) line += (k ? " " : "") + std::to_string(r->choices[i].ids[k]);
        }
        if (r->choices.size() > 1) std::printf("[%zu] ", i);
        std::printf("%s\n", line.c_str());
      }
    }
    return 0;
  }

  // Batch: submit every line, then collect in order (they run concurrently in the engine).
  std::vector<di_request*> reqs;
  std::vector<json> errors(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    std::vector<int32_t> p;
    if (batch[i].first.is_string()) {
      auto t = s.encode_text(batch[i].first.get<std::string>());
      if (!t.is_ok()) {
        errors[i] = t.status().message();
        reqs.push_back(nullptr);
        continue;
      }
      p = std::move(t).value();
    } else {
      // Checked here: a bare get<int32_t>() would wrap 4294967297 into token 1.
      for (size_t k = 0; k < batch[i].first.size() && errors[i].is_null(); ++k) {
        const json& id = batch[i].first[k];
        if (id.is_number_unsigned() && id.get<uint64_t>() <= static_cast<uint64_t>(INT32_MAX)) {
          p.push_back(static_cast<int32_t>(id.get<uint64_t>()));
        } else if (id.is_number_integer() && !id.is_number_unsigned() && id.get<int64_t>() >= 0 &&
                   id.get<int64_t>() <= INT32_MAX) {
          p.push_back(static_cast<int32_t>(id.get<int64_t>()));
        } else {
          errors[i] = "prompt_ids[" + std::to_string(k) + "]: expected a token id (an integer in [0, 2147483647]), got " +
                      id.dump();
        }
      }
      if (!errors[i].is_null()) {
        reqs.push_back(nullptr);
        continue;
      }
    }
    auto r = s.submit(p, batch[i].second);
    if (!r.is_ok()) errors[i] = r.status().message();
    reqs.push_back(r.is_ok() ? *r : nullptr);
  }
  int rc = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (!reqs[i]) {
      std::printf("%s\n", json{{"error", errors[i]}}.dump().c_str());
      rc = 2;
      continue;
    }
    const int n = batch[i].second.contains("n") ? batch[i].second["n"].get<int>() : 1;
    auto r = EngineSession::collect(reqs[i], n);
    di_request_destroy(reqs[i]);
    if (!r.is_ok()) {
      std::printf("%s\n", json{{"error", r.status().message()}}.dump().c_str());
      rc = 1;
      continue;
    }
    std::printf("%s\n", result_json(*r).dump().c_str());
  }
  return rc;
}

}  // namespace di::cli
