// The device sampler against the CPU sampler on the same logits and SampleSpecs: identical tokens
// (greedy and seeded draws, every truncation and edit), logprobs within 1e-4, the same top
// logprobs; and no row's draw depends on the other rows of its batch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/model/cuda/device_sampler.h"
#include "engine/sample/sampler.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"

namespace di::engine {
namespace {

namespace kc = di::kernels::cuda;

bool have_gpu() { return kc::device_count() > 0; }

// Logits with the shape of a real head: a few large values, a long tail, exact ties (so top-k and
// top-p boundaries fall on tied groups) and some -inf (a constraint mask).
std::vector<float> make_logits(int64_t rows, int64_t V, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> n(0.f, 2.f);
  std::vector<float> x(static_cast<size_t>(rows * V));
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x.data() + r * V;
    for (int64_t i = 0; i < V; ++i) row[i] = n(rng);
    for (int i = 0; i < 8; ++i) row[rng() % V] = 9.f + static_cast<float>(i % 3);  // tied peaks
    for (int i = 0; i < 40; ++i) row[rng() % V] = 4.5f;                            // a tied plateau
    for (int i = 0; i < V / 50; ++i) row[rng() % V] = -INFINITY;
  }
  return x;
}

std::vector<SampleSpec> make_specs(int64_t rows, int64_t V, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SampleSpec> specs;
  const double temps[] = {0.0, 0.7, 1.0, 1.3};
  const int32_t top_ks[] = {0, 1, 5, 20, 50, 1000};
  const double top_ps[] = {1.0, 0.9, 0.5, 0.05};
  const double min_ps[] = {0.0, 0.05, 0.3};
  int i = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int rep = 0; rep < 6; ++rep, ++i) {
      SampleSpec s;
      s.row = static_cast<int32_t>(r);
      s.temperature = temps[rng() % 4];
      s.top_k = top_ks[rng() % 6];
      s.top_p = top_ps[rng() % 4];
      s.min_p = min_ps[rng() % 3];
      s.seed = rng();
      s.index = rng() % 4;
      s.position = rng() % 4096;
      s.logprobs = rng() % 2;
      s.top_logprobs = s.logprobs ? static_cast<int32_t>(rng() % 21) : 0;
      if (i % 3 == 0) {
        const int64_t base = static_cast<int64_t>(rng() % V);  // each kind edits distinct tokens
        for (int e = 0; e < 5; ++e)
          s.edits[0].push_back({static_cast<int32_t>((base + e) % V), static_cast<float>(rng() % 7) - 3.f});
        s.edits[1].push_back({static_cast<int32_t>(rng() % V), 0});
        for (int e = 0; e < 30; ++e) s.edits[2].push_back({static_cast<int32_t>(e * 37 % V), 1.3f});
        for (int e = 0; e < 10; ++e) s.edits[3].push_back({static_cast<int32_t>(e * 101 % V), 0.4f * e});
      }
      specs.push_back(std::move(s));
    }
  return specs;
}

void expect_same(const std::vector<float>& logits, int64_t V, const std::vector<SampleSpec>& specs,
                 const std::vector<Result<SampledToken>>& gpu) {
  ASSERT_EQ(gpu.size(), specs.size());
  std::vector<float> work;
  int drawn = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const SampleSpec& s = specs[i];
    auto cpu = sample_logits(std::span<const float>(logits.data() + s.row * V, static_cast<size_t>(V)), s, work);
    ASSERT_EQ(cpu.is_ok(), gpu[i].is_ok()) << "spec " << i;
    if (!cpu.is_ok()) continue;
    drawn += !s.greedy();
    EXPECT_EQ(cpu->token, gpu[i]->token) << "spec " << i << " T=" << s.temperature << " k=" << s.top_k
                                         << " p=" << s.top_p << " min_p=" << s.min_p;
    if (s.logprobs) {
      EXPECT_NEAR(cpu->logprob, gpu[i]->logprob, 1e-4) << "spec " << i;
      ASSERT_EQ(cpu->top_logprobs.size(), gpu[i]->top_logprobs.size()) << "spec " << i;
      for (size_t j = 0; j < cpu->top_logprobs.size(); ++j) {
        EXPECT_EQ(cpu->top_logprobs[j].first, gpu[i]->top_logprobs[j].first) << "spec " << i << " top " << j;
        EXPECT_NEAR(cpu->top_logprobs[j].second, gpu[i]->top_logprobs[j].second, 1e-4);
      }
    }
  }
  EXPECT_GT(drawn, 0);
}

class DeviceSamplerTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(DeviceSamplerTest, EqualsTheCpuSampler) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU";
  const int64_t V = GetParam(), rows = 12;
  const std::vector<float> logits = make_logits(rows, V, 11 + V);
  const std::vector<SampleSpec> specs = make_specs(rows, V, 5 + V);
  kc::DeviceBuffer d;
  ASSERT_TRUE(d.allocate(static_cast<int64_t>(logits.size() * 4)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d.get(), logits.data(), static_cast<int64_t>(logits.size() * 4)).is_ok());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cuda::DeviceSampler sampler;
  std::vector<Result<SampledToken>> out;
  ASSERT_TRUE(sampler.sample(d.as<float>(), V, specs, stream, out).is_ok());
  expect_same(logits, V, specs, out);

  // Each draw alone gives what it gave in the batch.
  for (size_t i = 0; i < specs.size(); i += 7) {
    std::vector<Result<SampledToken>> one;
    ASSERT_TRUE(sampler.sample(d.as<float>(), V, std::span<const SampleSpec>(&specs[i], 1), stream, one).is_ok());
    ASSERT_EQ(one.size(), 1u);
    ASSERT_EQ(one[0].is_ok(), out[i].is_ok());
    if (one[0].is_ok()) {
      EXPECT_EQ(one[0]->token, out[i]->token);
    }
  }
  cudaStreamDestroy(stream);
}

// 50 tokens, a vocabulary not a multiple of the block, and DeepSeek-V3/V4's 129,280.
INSTANTIATE_TEST_SUITE_P(Vocab, DeviceSamplerTest, ::testing::Values(int64_t{50}, int64_t{3001}, int64_t{129280}));

TEST(DeviceSampler, ExcludedRowsAndNaNAreErrors) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU";
  const int64_t V = 300;
  std::vector<float> logits(static_cast<size_t>(2 * V), -INFINITY);
  for (int64_t i = 0; i < V; ++i) logits[V + i] = static_cast<float>(i % 5);
  logits[V + 17] = NAN;
  kc::DeviceBuffer d;
  ASSERT_TRUE(d.allocate(static_cast<int64_t>(logits.size() * 4)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(d.get(), logits.data(), static_cast<int64_t>(logits.size() * 4)).is_ok());
  std::vector<SampleSpec> specs(2);
  specs[1].row = 1;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cuda::DeviceSampler sampler;
  std::vector<Result<SampledToken>> out;
  ASSERT_TRUE(sampler.sample(d.as<float>(), V, specs, stream, out).is_ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].is_ok());
  EXPECT_NE(out[0].status().message().find("excluded"), std::string::npos);
  EXPECT_FALSE(out[1].is_ok());
  EXPECT_NE(out[1].status().message().find("NaN"), std::string::npos);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace di::engine
