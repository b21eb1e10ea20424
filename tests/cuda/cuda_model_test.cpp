// What every CUDA model must do whatever its family, on each family's transformers fixtures
// (dense, MLA, deepseek_v4): greedy decode, chunked prefill and batching through device caches
// against its own one-prefill run, a clear error for a host cache, the engine end to end (seeded
// sampling equal to the CPU's, paging and preemption), and "auto" picking the GPU. What only one
// family has stays in its own file.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/common/model_checks.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/cuda_vs_cpu.h"
#include "tests/cuda/device_model_util.h"
#include "tests/model_families/family_fixture.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

struct CudaModelCase {
  FixtureId id;
  double tolerance;  // max|Δlogit| / max|logit| per row, the GPU against its own one-prefill run
  std::vector<std::vector<int32_t>> chunkings;  // chunk sizes (cycled) that must equal one prefill
  bool prefill_then_decode;                     // and the prompt in one chunk, then one token a step
};

void PrintTo(const CudaModelCase& c, std::ostream* os) { *os << c.id.name; }

std::vector<CudaModelCase> cases() {
  std::vector<CudaModelCase> out;
  for (const FixtureId& id : dense_fixtures()) out.push_back({id, kSelfTolerance, {{1}, {3}, {5, 1, 7}, {32, 1}}, false});
  for (const FixtureId& id : mla_fixtures()) out.push_back({id, 1e-4, {{1}, {3}, {5, 1, 7}}, true});
  for (const std::string& name : fixture_names())
    out.push_back({v4_fixture(name), kSelfTolerance, {{1}, {2}, {3}, {5, 1, 7}, {13}, {64, 1}}, true});
  return out;
}

class CudaModel : public CudaTestWithParam<CudaModelCase> {
 protected:
  void SetUp() override {
    CudaTestWithParam<CudaModelCase>::SetUp();
    if (IsSkipped()) return;
    f = load_fixture(GetParam().id);
  }
  Fixture f;
};

TEST_P(CudaModel, GreedyDecodeMatchesTransformers) {
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  const std::vector<int32_t> generated = greedy_on_device(*model, f);
  ASSERT_EQ(generated.size(), f.greedy.size());
  int agree = 0;
  for (size_t i = 0; i < generated.size(); ++i) agree += generated[i] == f.greedy[i];
  std::printf("%s (cuda): greedy tokens equal to transformers: %d/%zu\n", GetParam().id.name.c_str(), agree,
              f.greedy.size());
  EXPECT_EQ(generated, f.greedy);
}

TEST_P(CudaModel, AnyChunkingEqualsOnePrefill) {
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  std::vector<std::vector<int32_t>> chunkings = GetParam().chunkings;
  if (GetParam().prefill_then_decode) chunkings.push_back(prefill_then_decode_chunks(f));
  expect_device_chunking_equals_one_prefill(*model, f, GetParam().id.name, chunkings, GetParam().tolerance);
}

TEST_P(CudaModel, BatchedSequencesEqualEachAlone) {
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_batched_equals_alone(*model, f, GetParam().tolerance);
}

TEST_P(CudaModel, HostCacheIsRejectedWithAClearError) {
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_host_cache_rejected(*model, f);
}

TEST_P(CudaModel, EngineSeededSamplingOnTheDeviceEqualsTheCpu) { expect_engine_sampling_same_on_cpu_and(f, "cuda"); }

TEST_P(CudaModel, EngineGreedyWithPagingAndPreemptionMatchesTransformers) {
  expect_engine_greedy_with_preemption(f, "cpu");  // the same schedule on the CPU: engine bugs vs GPU ones
  expect_engine_greedy_with_preemption(f, "cuda");
}

TEST_P(CudaModel, AutoDevicePicksCuda) {
  auto m = load_on(f.dir, "auto");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->info().device, "cuda");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaModel, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.id.name; });

}  // namespace
}  // namespace di::test
