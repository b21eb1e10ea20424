// di_options: typed keyed setters and getters, and every bad path the ABI promises to reject.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "deepinfer.h"

namespace {

struct ErrorDeleter {
  void operator()(di_error* e) const { di_error_destroy(e); }
};
using ErrorPtr = std::unique_ptr<di_error, ErrorDeleter>;

class Options : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(di_options_create(&opts_, nullptr), DI_OK); }
  void TearDown() override { di_options_destroy(opts_); }

  // Runs `call` with a fresh error slot and returns the status and error.
  template <class F>
  std::pair<di_status, ErrorPtr> run(F&& call) {
    di_error* err = nullptr;
    di_status s = call(&err);
    return {s, ErrorPtr(err)};
  }

  di_options* opts_ = nullptr;
};

TEST_F(Options, TypedValuesRoundTrip) {
  ASSERT_EQ(di_options_set_i64(opts_, "max_tokens", 128, nullptr), DI_OK);
  ASSERT_EQ(di_options_set_f64(opts_, "temperature", 0.25, nullptr), DI_OK);
  ASSERT_EQ(di_options_set_str(opts_, "device", "cpu", 3, nullptr), DI_OK);
  const char stop[] = "[\"\\n\\n\", \"END\"]";
  ASSERT_EQ(di_options_set_json(opts_, "stop", stop, sizeof(stop) - 1, nullptr), DI_OK);

  int64_t i = 0;
  double d = 0;
  const char* s = nullptr;
  size_t len = 0;
  EXPECT_EQ(di_options_get_i64(opts_, "max_tokens", &i, nullptr), DI_OK);
  EXPECT_EQ(i, 128);
  EXPECT_EQ(di_options_get_f64(opts_, "temperature", &d, nullptr), DI_OK);
  EXPECT_EQ(d, 0.25);
  EXPECT_EQ(di_options_get_str(opts_, "device", &s, &len, nullptr), DI_OK);
  EXPECT_EQ(std::string(s, len), "cpu");
  EXPECT_EQ(s[len], '\0');
  EXPECT_EQ(di_options_get_json(opts_, "stop", &s, &len, nullptr), DI_OK);
  EXPECT_EQ(nlohmann::json::parse(std::string(s, len)), nlohmann::json({"\n\n", "END"}));
}

TEST_F(Options, LaterSetReplacesEarlier) {
  ASSERT_EQ(di_options_set_i64(opts_, "top_k", 5, nullptr), DI_OK);
  ASSERT_EQ(di_options_set_i64(opts_, "top_k", 7, nullptr), DI_OK);
  int64_t v = 0;
  ASSERT_EQ(di_options_get_i64(opts_, "top_k", &v, nullptr), DI_OK);
  EXPECT_EQ(v, 7);
}

TEST_F(Options, IntegerAcceptedForDoubleKey) {
  ASSERT_EQ(di_options_set_i64(opts_, "temperature", 1, nullptr), DI_OK);
  double d = 0;
  ASSERT_EQ(di_options_get_f64(opts_, "temperature", &d, nullptr), DI_OK);
  EXPECT_EQ(d, 1.0);
}

TEST_F(Options, UnknownKeyIsUnsupportedAndNamed) {
  auto [s, err] = run([&](di_error** e) { return di_options_set_i64(opts_, "max_tokenz", 1, e); });
  EXPECT_EQ(s, DI_E_UNSUPPORTED);
  ASSERT_TRUE(err);
  EXPECT_EQ(di_error_code(err.get()), DI_E_UNSUPPORTED);
  EXPECT_NE(std::string(di_error_message(err.get())).find("max_tokenz"), std::string::npos);
  int64_t v;
  EXPECT_EQ(di_options_get_i64(opts_, "max_tokenz", &v, nullptr), DI_E_UNSUPPORTED);
}

TEST_F(Options, WrongTypeIsInvalidArgAndNamed) {
  auto [s, err] = run([&](di_error** e) { return di_options_set_f64(opts_, "max_tokens", 1.5, e); });
  EXPECT_EQ(s, DI_E_INVALID_ARG);
  ASSERT_TRUE(err);
  EXPECT_NE(std::string(di_error_message(err.get())).find("max_tokens"), std::string::npos);
  EXPECT_EQ(di_options_set_str(opts_, "temperature", "hot", 3, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_set_json(opts_, "device", "\"cpu\"", 5, nullptr), DI_E_INVALID_ARG);
  ASSERT_EQ(di_options_set_i64(opts_, "max_tokens", 3, nullptr), DI_OK);
  double d;
  EXPECT_EQ(di_options_get_f64(opts_, "max_tokens", &d, nullptr), DI_E_INVALID_ARG);
}

TEST_F(Options, NanRejected) {
  EXPECT_EQ(di_options_set_f64(opts_, "temperature", std::nan(""), nullptr), DI_E_INVALID_ARG);
  double d;
  EXPECT_EQ(di_options_get_f64(opts_, "temperature", &d, nullptr), DI_E_NOT_FOUND);
}

TEST_F(Options, UnsetKnownKeyIsNotFound) {
  int64_t v;
  EXPECT_EQ(di_options_get_i64(opts_, "seed", &v, nullptr), DI_E_NOT_FOUND);
}

TEST_F(Options, NullArgumentsRejected) {
  int64_t v;
  const char* s;
  size_t n;
  EXPECT_EQ(di_options_set_i64(nullptr, "seed", 1, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_set_i64(opts_, nullptr, 1, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_get_i64(nullptr, "seed", &v, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_get_i64(opts_, nullptr, &v, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_get_i64(opts_, "seed", nullptr, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_set_str(opts_, "device", nullptr, 3, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_get_str(opts_, "device", nullptr, &n, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_set_json(opts_, "stop", nullptr, 2, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_to_json(nullptr, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_clone(nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_options_update_json(opts_, nullptr, 0, nullptr), DI_E_INVALID_ARG);
  (void)s;
  di_options_destroy(nullptr);
}

TEST_F(Options, EmptyAndVeryLongStrings) {
  ASSERT_EQ(di_options_set_str(opts_, "device", nullptr, 0, nullptr), DI_OK);
  const char* s = nullptr;
  size_t len = 99;
  ASSERT_EQ(di_options_get_str(opts_, "device", &s, &len, nullptr), DI_OK);
  EXPECT_EQ(len, 0u);
  EXPECT_STREQ(s, "");
  const std::string big(8 << 20, 'x');
  ASSERT_EQ(di_options_set_str(opts_, "device", big.data(), big.size(), nullptr), DI_OK);
  ASSERT_EQ(di_options_get_str(opts_, "device", &s, &len, nullptr), DI_OK);
  EXPECT_EQ(std::string(s, len), big);
}

TEST_F(Options, InvalidUtf8AndEmbeddedNulRejected) {
  const char* bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "abc\xe2\x82", "\xf4\x90\x80\x80"};
  for (const char* b : bad) {
    EXPECT_EQ(di_options_set_str(opts_, "device", b, std::strlen(b), nullptr), DI_E_INVALID_ARG)
        << b;
  }
  EXPECT_EQ(di_options_set_str(opts_, "device", "a\0b", 3, nullptr), DI_E_INVALID_ARG);
  const char ok[] = "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80";  // 你好 😀
  EXPECT_EQ(di_options_set_str(opts_, "device", ok, sizeof(ok) - 1, nullptr), DI_OK);
}

TEST_F(Options, MalformedJsonIsParseError) {
  auto [s, err] = run([&](di_error** e) { return di_options_set_json(opts_, "stop", "[1,", 3, e); });
  EXPECT_EQ(s, DI_E_PARSE);
  ASSERT_TRUE(err);
  EXPECT_NE(std::string(di_error_message(err.get())).find("stop"), std::string::npos);
  EXPECT_EQ(di_options_set_json(opts_, "stop", "", 0, nullptr), DI_E_PARSE);
}

TEST_F(Options, UpdateFromJsonIsAllOrNothing) {
  const std::string good = R"({"temperature": 0.5, "max_tokens": 10, "device": "cpu",
                               "stop": ["x"], "ignore_eos": true})";
  ASSERT_EQ(di_options_update_json(opts_, good.data(), good.size(), nullptr), DI_OK);
  int64_t v = 0;
  ASSERT_EQ(di_options_get_i64(opts_, "ignore_eos", &v, nullptr), DI_OK);
  EXPECT_EQ(v, 1);

  const std::string bad = R"({"temperature": 0.9, "max_tokens": "many"})";
  auto [s, err] = run([&](di_error** e) { return di_options_update_json(opts_, bad.data(), bad.size(), e); });
  EXPECT_EQ(s, DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err.get())).find("max_tokens"), std::string::npos);
  double d = 0;
  ASSERT_EQ(di_options_get_f64(opts_, "temperature", &d, nullptr), DI_OK);
  EXPECT_EQ(d, 0.5) << "a failed update must leave the options unchanged";

  const std::string unknown = R"({"nope": 1})";
  EXPECT_EQ(di_options_update_json(opts_, unknown.data(), unknown.size(), nullptr),
            DI_E_UNSUPPORTED);
  EXPECT_EQ(di_options_update_json(opts_, "[1]", 3, nullptr), DI_E_PARSE);
}

TEST_F(Options, ToJsonAndCloneAreIndependentCopies) {
  ASSERT_EQ(di_options_set_i64(opts_, "seed", 42, nullptr), DI_OK);
  di_options* copy = nullptr;
  ASSERT_EQ(di_options_clone(opts_, &copy, nullptr), DI_OK);
  ASSERT_EQ(di_options_set_i64(opts_, "seed", 7, nullptr), DI_OK);
  char* json = nullptr;
  size_t len = 0;
  ASSERT_EQ(di_options_to_json(copy, &json, &len, nullptr), DI_OK);
  EXPECT_EQ(nlohmann::json::parse(std::string(json, len)), nlohmann::json({{"seed", 42}}));
  di_free(json);
  di_options_destroy(copy);
}

TEST(OptionsSchema, ListsEveryKeyWithType) {
  const auto schema = nlohmann::json::parse(di_options_schema());
  ASSERT_TRUE(schema.is_array());
  ASSERT_FALSE(schema.empty());
  di_options* o = nullptr;
  ASSERT_EQ(di_options_create(&o, nullptr), DI_OK);
  for (const auto& entry : schema) {
    const std::string key = entry.at("key");
    const std::string type = entry.at("type");
    di_status s = DI_E_INTERNAL;
    if (type == "int64") s = di_options_set_i64(o, key.c_str(), 1, nullptr);
    if (type == "double") s = di_options_set_f64(o, key.c_str(), 0.5, nullptr);
    if (type == "string") s = di_options_set_str(o, key.c_str(), "auto", 4, nullptr);
    if (type == "json") s = di_options_set_json(o, key.c_str(), "[]", 2, nullptr);
    EXPECT_EQ(s, DI_OK) << key;
  }
  di_options_destroy(o);
}

}  // namespace
