// di_log_set: an embedder's callback receives the load-phase records of di_engine_create (with
// the checkpoint's bytes and the cache's blocks as the engine reports them), filtered by level;
// a level outside the range is refused and leaves the sink as it was.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/capi_engine/capi_engine_fixture.h"

namespace {

struct Records {
  std::mutex mu;
  std::vector<std::pair<int32_t, std::string>> all;
};

void collect(void* user, int32_t level, const char* message, size_t len) {
  auto* r = static_cast<Records*>(user);
  std::lock_guard<std::mutex> l(r->mu);
  r->all.emplace_back(level, std::string(message, len));
}

bool any_starts_with(const Records& r, const std::string& prefix) {
  for (const auto& [level, m] : r.all)
    if (m.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(CapiLog, CallbackReceivesTheLoadPhasesOfEngineCreate) {
  const std::string dir = std::string(DI_FIXTURES_DIR) + "/model_v4/mixed_yarn_hc2";
  Records r;
  ASSERT_EQ(di_log_set(collect, &r, DI_LOG_INFO, nullptr), DI_OK);
  di_engine* e = nullptr;
  di_error* err = nullptr;
  ASSERT_EQ(di_engine_create(dir.data(), dir.size(), nullptr, &e, &err), DI_OK) << di_error_message(err);
  char* info = nullptr;
  size_t len = 0;
  ASSERT_EQ(di_engine_info(e, &info, &len, nullptr), DI_OK);
  const nlohmann::json j = nlohmann::json::parse(std::string(info, len));
  di_free(info);
  di_engine_destroy(e);
  di_log_set(nullptr, nullptr, DI_LOG_WARN, nullptr);

  EXPECT_TRUE(any_starts_with(r, "config: " + dir + "/config.json: model_type deepseek_v4"));
  EXPECT_TRUE(any_starts_with(r, "device: cpu"));
  EXPECT_TRUE(any_starts_with(r, "weights: loaded in "));
  EXPECT_TRUE(any_starts_with(r, "engine ready: "));
  std::string kv;
  for (const auto& [level, m] : r.all) {
    EXPECT_EQ(level, DI_LOG_INFO) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    if (m.rfind("kv cache: ", 0) == 0) kv = m;
  }
  // The cache line states what di_engine_info reports.
  ASSERT_TRUE(j.contains("limits")) << j.dump();
  const std::string blocks = std::to_string(j["limits"]["num_kv_blocks"].get<int64_t>()) + " blocks of " +
                             std::to_string(j["limits"]["block_size"].get<int64_t>()) + " tokens";
  EXPECT_EQ(kv.rfind("kv cache: " + blocks, 0), 0u) << kv << " vs " << j["limits"].dump();
}

TEST(CapiLog, LevelFiltersAndBadLevelsAreRefused) {
  const std::string dir = std::string(DI_FIXTURES_DIR) + "/model_v4/mixed_yarn_hc2";
  Records r;
  ASSERT_EQ(di_log_set(collect, &r, DI_LOG_WARN, nullptr), DI_OK);
  di_error* err = nullptr;
  EXPECT_EQ(di_log_set(collect, &r, 7, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("max_level"), std::string::npos);
  di_error_destroy(err);
  di_engine* e = nullptr;
  ASSERT_EQ(di_engine_create(dir.data(), dir.size(), nullptr, &e, nullptr), DI_OK);
  di_engine_destroy(e);
  di_log_set(nullptr, nullptr, DI_LOG_WARN, nullptr);
  EXPECT_TRUE(r.all.empty()) << r.all.front().second;  // info records filtered; the sink survived the bad call
}

}  // namespace
