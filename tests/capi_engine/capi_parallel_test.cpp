// The parallel layout through the C ABI: the option keys, their errors, the refusal of layouts
// this build cannot run (before any weight loads) and di_engine_info's "parallel" object.
#include <gtest/gtest.h>

#include <string>

#include "tests/capi_engine/capi_engine_fixture.h"

namespace di_test {
namespace {

// Creates an engine over `dir` with `json` options; returns the status and the error message.
std::pair<di_status, std::string> try_create(const std::string& dir, const std::string& json) {
  Options o = options(json);
  di_engine* e = nullptr;
  di_error* err = nullptr;
  const di_status s = di_engine_create(dir.data(), dir.size(), o.get(), &e, &err);
  std::string msg = err ? di_error_message(err) : "";
  di_error_destroy(err);
  di_engine_destroy(e);
  if (s != DI_OK) {
    EXPECT_EQ(e, nullptr);
  }
  return {s, msg};
}

TEST(CapiEngine, InfoReportsTheDefaultLayout) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 200})");
  const nlohmann::json p = engine_info(e.get())["parallel"];
  EXPECT_EQ(p["tensor_parallel_size"], 1);
  EXPECT_EQ(p["expert_parallel_size"], 1);
  EXPECT_EQ(p["data_parallel_size"], 1);
  EXPECT_EQ(p["world_size"], 1);
  EXPECT_EQ(p["rank"], 0);
  EXPECT_EQ(p["dp_vote"], "all");
  EXPECT_EQ(p["rendezvous"], "");
  EXPECT_EQ(p["eplb"]["enabled"], false);
  EXPECT_EQ(p["eplb"]["rebalance_interval"], 1000);
}

TEST(CapiEngine, InfoReportsAGivenOneProcessLayout) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  Engine e = engine(f.dir, R"({"max_model_len": 200, "dp_vote": "any", "tensor_parallel_size": 1})");
  const nlohmann::json p = engine_info(e.get())["parallel"];
  EXPECT_EQ(p["dp_vote"], "any");
  EXPECT_EQ(p["world_size"], 1);
  Request r = submit(e.get(), f.prompt, R"({"temperature": 0, "max_tokens": 3})");
  EXPECT_EQ(drain(r.get())[0].tokens.size(), 3u);  // and it generates as without a layout
}

// The directory does not exist: a layout error, not DI_E_NOT_FOUND, shows it is checked first.
TEST(CapiEngine, LayoutOfSeveralProcessesIsRefusedBeforeLoadingNamingWhatIsMissing) {
  const std::string none = std::string(DI_FIXTURES_DIR) + "/no-such-model";
  auto [s, msg] = try_create(none, R"({"tensor_parallel_size": 2, "parallel_rank": 1, "parallel_world_size": 2,
                                      "nccl_rendezvous": "file:/tmp/nccl.id"})");
  EXPECT_EQ(s, DI_E_UNSUPPORTED);
  EXPECT_NE(msg.find("parallel layout of 2 processes: tensor_parallel_size 2: tensor parallelism"), std::string::npos) << msg;
  std::tie(s, msg) = try_create(none, R"({"expert_parallel_size": 2, "eplb": 1, "eplb_num_redundant_experts": 2,
                                          "parallel_rank": 0, "parallel_world_size": 2, "nccl_rendezvous": "127.0.0.1:29500"})");
  EXPECT_EQ(s, DI_E_UNSUPPORTED);
  EXPECT_NE(msg.find("expert parallelism (all-to-all token dispatch, EPLB weight moves) is not built yet"), std::string::npos) << msg;
  std::tie(s, msg) = try_create(none, R"({"data_parallel_size": 4, "parallel_rank": 3, "parallel_world_size": 4,
                                          "nccl_rendezvous": "file:/tmp/nccl.id"})");
  EXPECT_EQ(s, DI_E_UNSUPPORTED);
  EXPECT_NE(msg.find("data_parallel_size 4"), std::string::npos) << msg;
}

TEST(CapiEngine, BadLayoutOptionsAreInvalidArguments) {
  const std::string none = std::string(DI_FIXTURES_DIR) + "/no-such-model";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"tensor_parallel_size": 0})", "tensor_parallel_size: expected 1..1024, got 0"},
      {R"({"dp_vote": "most"})", "dp_vote: expected \"all\" or \"any\", got \"most\""},
      {R"({"eplb": 1})", "expert_parallel_size is 1"},
      {R"({"eplb": 2})", "eplb: expected 0 or 1, got 2"},
      {R"({"tensor_parallel_size": 2, "parallel_world_size": 4, "parallel_rank": 0})", "= 2, but the world size is 4"},
      {R"({"tensor_parallel_size": 2, "parallel_world_size": 2, "parallel_rank": 0, "nccl_rendezvous": "nohost"})",
       "rendezvous: expected"},
      {R"({"parallel_rank": -1})", "parallel_rank: expected >= 0, got -1"},
  };
  for (const auto& [json, want] : cases) {
    auto [s, msg] = try_create(none, json);
    EXPECT_EQ(s, DI_E_INVALID_ARG) << json;
    EXPECT_NE(msg.find(want), std::string::npos) << json << ": " << msg;
  }
}

}  // namespace
}  // namespace di_test
