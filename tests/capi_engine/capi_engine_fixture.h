// Shared helpers for the C ABI engine tests: the DeepSeek-V4 fixture (prompt ids and
// transformers' greedy ids), RAII handles, and running requests to completion.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/common/capi_calls.h"

namespace di_test {

struct V4Fixture {
  std::string dir;
  std::vector<int32_t> prompt;
  std::vector<int32_t> greedy;  // transformers' generate (greedy) after the prompt
};

inline V4Fixture load_v4_fixture(const std::string& name) {
  V4Fixture f;
  f.dir = std::string(DI_FIXTURES_DIR) + "/model_v4/" + name;
  std::ifstream in(f.dir + "/fixture.json");
  nlohmann::json j = nlohmann::json::parse(in);
  f.prompt = j["prompt_ids"].get<std::vector<int32_t>>();
  f.greedy = j["greedy_ids"].get<std::vector<int32_t>>();
  return f;
}

struct OptionsDeleter { void operator()(di_options* o) const { di_options_destroy(o); } };
struct EngineDeleter { void operator()(di_engine* e) const { di_engine_destroy(e); } };
struct RequestDeleter { void operator()(di_request* r) const { di_request_destroy(r); } };
using Options = std::unique_ptr<di_options, OptionsDeleter>;
using Engine = std::unique_ptr<di_engine, EngineDeleter>;
using Request = std::unique_ptr<di_request, RequestDeleter>;

inline Options options(const std::string& json) {
  di_options* o = nullptr;
  EXPECT_EQ(di_options_create(&o, nullptr), DI_OK);
  di_error* err = nullptr;
  EXPECT_EQ(di_options_update_json(o, json.data(), json.size(), &err), DI_OK) << di_error_message(err);
  di_error_destroy(err);
  return Options(o);
}

inline Engine engine(const std::string& dir, const std::string& json = "{}") {
  Options o = options(json);
  di_engine* e = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_engine_create(dir.data(), dir.size(), o.get(), &e, &err), DI_OK) << di_error_message(err);
  di_error_destroy(err);
  return Engine(e);
}

struct Completion {
  std::vector<int32_t> tokens;
  int32_t finish = DI_FINISH_NONE;
  int64_t cached = 0;
};

inline Request submit(di_engine* e, const std::vector<int32_t>& ids, const std::string& sampling) {
  Options o = options(sampling);
  di_request* r = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_submit(e, ids.data(), ids.size(), o.get(), nullptr, nullptr, &r, &err), DI_OK)
      << di_error_message(err);
  di_error_destroy(err);
  return Request(r);
}

inline std::vector<Completion> drain(di_request* r, int n = 1) {
  std::vector<Completion> out(static_cast<size_t>(n));
  for_each_chunk(r, [&](const di_chunk& c) {
    Completion& o = out[c.index];
    o.tokens.insert(o.tokens.end(), c.token_ids, c.token_ids + c.num_tokens);
    o.cached = c.cached_prompt_tokens;
    if (c.finish_reason != DI_FINISH_NONE) o.finish = c.finish_reason;
  });
  return out;
}

inline nlohmann::json metrics(di_engine* e) {
  char* text = nullptr;
  EXPECT_EQ(di_engine_metrics(e, 0, &text, nullptr, nullptr), DI_OK);
  nlohmann::json j = nlohmann::json::parse(text);
  di_free(text);
  return j;
}

inline nlohmann::json engine_info(di_engine* e) {
  char* text = nullptr;
  size_t len = 0;
  EXPECT_EQ(di_engine_info(e, &text, &len, nullptr), DI_OK);
  nlohmann::json j = nlohmann::json::parse(std::string(text, len));
  di_free(text);
  return j;
}

}  // namespace di_test
