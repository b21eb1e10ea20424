// ParallelConfig: torchrun's environment, explicit ranks, the rendezvous forms and the layout
// checks against model shapes and visible GPUs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/parallel/parallel_config.h"

namespace di::engine {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

ParallelConfig sizes(int32_t tp, int32_t ep, int32_t dp) {
  ParallelConfig c;
  c.tensor_parallel_size = tp;
  c.expert_parallel_size = ep;
  c.data_parallel_size = dp;
  return c;
}

TEST(ParallelConfig, DefaultIsOneProcessWithoutEnvironment) {
  ParallelConfig c;
  EXPECT_TRUE(c.is_default());
  auto l = resolve_parallel_layout(c, env_of({}));
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->world_size, 1);
  EXPECT_EQ(l->rank, 0);
  EXPECT_EQ(l->rendezvous.kind, Rendezvous::Kind::kNone);
}

TEST(ParallelConfig, TorchrunEnvironmentGivesRankCoordinatesAndRendezvous) {
  // 2 nodes × 4 GPUs: tp 2, ep 2, dp 2; global rank 6 is local rank 2 of node 1.
  auto env = env_of({{"RANK", "6"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "4"},
                     {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}});
  auto l = resolve_parallel_layout(sizes(2, 2, 2), env);
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->rank, 6);
  EXPECT_EQ(l->local_rank, 2);
  EXPECT_EQ(l->local_world_size, 4);
  EXPECT_EQ(l->tp_rank, 0);
  EXPECT_EQ(l->ep_rank, 1);
  EXPECT_EQ(l->dp_rank, 1);
  EXPECT_EQ(l->rendezvous.kind, Rendezvous::Kind::kTcp);
  EXPECT_EQ(l->rendezvous.to_string(), "tcp://10.0.0.1:29500");
  // Every rank's coordinates are distinct and rebuild the rank.
  std::set<std::tuple<int, int, int>> seen;
  for (int r = 0; r < 8; ++r) {
    ParallelConfig c = sizes(2, 2, 2);
    c.rank = r;
    c.world_size = 8;
    c.rendezvous = "file:/tmp/nccl_id";
    auto x = resolve_parallel_layout(c, env_of({}));
    ASSERT_TRUE(x.is_ok()) << x.status().message();
    EXPECT_EQ(x->tp_rank + 2 * (x->ep_rank + 2 * x->dp_rank), r);
    seen.insert({x->tp_rank, x->ep_rank, x->dp_rank});
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(ParallelConfig, ExplicitFieldsOverrideTheEnvironment) {
  ParallelConfig c = sizes(2, 1, 1);
  c.rank = 1;
  c.world_size = 2;
  c.rendezvous = "[::1]:1234";
  auto l = resolve_parallel_layout(c, env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}));
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->rank, 1);
  EXPECT_EQ(l->local_rank, 1);  // one node: local = global
  EXPECT_EQ(l->rendezvous.host, "::1");
  EXPECT_EQ(l->rendezvous.to_string(), "tcp://[::1]:1234");
}

TEST(ParallelConfig, ErrorsNameTheFieldAndTheCounts) {
  auto msg = [](const ParallelConfig& c, const EnvLookup& env) {
    auto l = resolve_parallel_layout(c, env);
    EXPECT_FALSE(l.is_ok());
    return l.is_ok() ? std::string() : l.status().message();
  };
  EXPECT_NE(msg(sizes(0, 1, 1), env_of({})).find("tensor_parallel_size: expected 1..1024, got 0"), std::string::npos);
  EXPECT_NE(msg(sizes(2, 2, 1), env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}})).find("= 4, but the world size is 2 (WORLD_SIZE)"),
            std::string::npos);
  EXPECT_NE(msg(sizes(2, 1, 1), env_of({})).find("no rank: start it with torchrun"), std::string::npos);
  EXPECT_NE(msg(sizes(2, 1, 1), env_of({{"RANK", "x"}})).find("RANK: expected an integer"), std::string::npos);
  EXPECT_NE(msg(sizes(2, 1, 1), env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}})).find("MASTER_ADDR and MASTER_PORT"),
            std::string::npos);
  EXPECT_NE(msg(sizes(2, 1, 1), env_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}})).find("rank: expected 0..1, got 2"),
            std::string::npos);
  ParallelConfig eplb;
  eplb.enable_eplb = true;
  EXPECT_NE(msg(eplb, env_of({})).find("expert_parallel_size is 1"), std::string::npos);
}

TEST(ParallelConfig, RendezvousForms) {
  auto file = parse_rendezvous("/shared/nccl.id");
  ASSERT_TRUE(file.is_ok());
  EXPECT_EQ(file->kind, Rendezvous::Kind::kFile);
  EXPECT_EQ(file->path, "/shared/nccl.id");
  auto tcp = parse_rendezvous("tcp://node0:29500");
  ASSERT_TRUE(tcp.is_ok());
  EXPECT_EQ(tcp->host, "node0");
  EXPECT_EQ(tcp->port, 29500);
  for (const char* bad : {"file:relative", "node0", "node0:0", "node0:70000", ":29500", "[::1]29500", "a:b:c"})
    EXPECT_FALSE(parse_rendezvous(bad).is_ok()) << bad;
}

TEST(ParallelConfig, LayoutMustDivideTheModelsWidths) {
  // DeepSeek-V2-Lite's config.json widths.
  const auto v2_lite = nlohmann::json::parse(R"({"num_attention_heads": 16, "num_key_value_heads": 16,
      "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2})");
  const ParallelModelShape s = parallel_model_shape(v2_lite);
  EXPECT_EQ(s.n_routed_experts, 64);
  EXPECT_TRUE(check_layout_fits_model(sizes(2, 1, 1), s).is_ok());
  EXPECT_TRUE(check_layout_fits_model(sizes(1, 8, 1), s).is_ok());
  Status st = check_layout_fits_model(sizes(3, 1, 1), s);
  EXPECT_EQ(st.message(), "tensor_parallel_size 3 does not divide the model's num_attention_heads 16");
  st = check_layout_fits_model(sizes(1, 3, 1), s);
  EXPECT_EQ(st.message(), "expert_parallel_size 3 does not divide the model's n_routed_experts 64");
  // Llama-3-8B: 8 kv heads.
  const auto llama = nlohmann::json::parse(R"({"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336})");
  EXPECT_EQ(check_layout_fits_model(sizes(16, 1, 1), parallel_model_shape(llama)).message(),
            "tensor_parallel_size 16 does not divide the model's num_key_value_heads 8");
  EXPECT_EQ(check_layout_fits_model(sizes(1, 2, 1), parallel_model_shape(llama)).message(),
            "expert_parallel_size 2: the model has no routed experts");
  // Experts split by tp when ep does not spread them: each expert's width must divide.
  const auto odd = nlohmann::json::parse(R"({"num_attention_heads": 8, "moe_intermediate_size": 100, "n_routed_experts": 8})");
  EXPECT_FALSE(check_layout_fits_model(sizes(8, 1, 1), parallel_model_shape(odd)).is_ok());
  EXPECT_TRUE(check_layout_fits_model(sizes(1, 8, 1), parallel_model_shape(odd)).is_ok());
}

TEST(ParallelConfig, LayoutNeedingMoreGpusThanVisibleIsAClearError) {
  ParallelConfig c = sizes(2, 2, 1);
  c.rank = 0;
  c.world_size = 4;
  c.rendezvous = "file:/tmp/id";
  auto l = resolve_parallel_layout(c, env_of({}));
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_TRUE(check_layout_fits_devices(*l, 4).is_ok());
  EXPECT_EQ(check_layout_fits_devices(*l, 1).message(),
            "parallel layout: 4 processes (tensor_parallel_size 2 × expert_parallel_size 2 × data_parallel_size 1), "
            "4 on this node, one GPU each, but 1 GPU is visible");
}

}  // namespace
}  // namespace di::engine
