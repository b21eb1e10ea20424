// The token bitmask kernel against a CPU reference: random logits and masks, a vocabulary that is
// not a multiple of 32, rows wider than the vocabulary, slots mapped to rows out of order and
// skipped slots; then the same through TokenMaskStager (pinned upload on its own stream).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/token_mask.h"
#include "tests/cuda/cuda_suite.h"

namespace {

namespace kc = di::kernels::cuda;

class CudaTokenMask : public di::test::CudaTest {};

struct Case {
  int64_t rows = 5, stride = 1003, vocab = 999, words = 40;  // 999 needs 32 words; 40 leaves slack
  std::vector<int32_t> slot_rows = {3, -1, 0, 4};
  std::vector<float> logits;
  std::vector<uint32_t> masks;

  explicit Case(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.f, 3.f);
    logits.resize(static_cast<size_t>(rows * stride));
    for (float& x : logits) x = nd(rng);
    masks.resize(slot_rows.size() * static_cast<size_t>(words));
    for (uint32_t& w : masks) w = rng() & rng();  // about a quarter of the bits set
    masks[0] = 0;                                 // a word with every token forbidden
    masks[1] = ~0u;                               // and one with all allowed
  }

  // What the kernel must produce: -inf where a mapped slot's bit is 0, for t < vocab only.
  std::vector<float> reference() const {
    std::vector<float> out = logits;
    for (size_t i = 0; i < slot_rows.size(); ++i) {
      if (slot_rows[i] < 0) continue;
      for (int64_t t = 0; t < vocab; ++t) {
        const uint32_t w = masks[i * static_cast<size_t>(words) + static_cast<size_t>(t / 32)];
        if (!((w >> (t % 32)) & 1u)) out[static_cast<size_t>(slot_rows[i] * stride + t)] = -INFINITY;
      }
    }
    return out;
  }
};

void expect_same(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  size_t masked = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    // Bit-exact: the kernel either leaves a logit alone or writes -inf.
    ASSERT_TRUE(got[i] == want[i]) << "element " << i << ": got " << got[i] << ", want " << want[i];
    masked += std::isinf(want[i]);
  }
  EXPECT_GT(masked, 1000u);  // the case does mask a lot
}

TEST_F(CudaTokenMask, KernelEqualsCpuReference) {
  Case c(7);
  kc::DeviceBuffer logits, masks, rows;
  ASSERT_TRUE(logits.allocate(static_cast<int64_t>(c.logits.size() * 4)).is_ok());
  ASSERT_TRUE(masks.allocate(static_cast<int64_t>(c.masks.size() * 4)).is_ok());
  ASSERT_TRUE(rows.allocate(static_cast<int64_t>(c.slot_rows.size() * 4)).is_ok());
  ASSERT_TRUE(kc::copy_to_device(logits.get(), c.logits.data(), logits.bytes()).is_ok());
  ASSERT_TRUE(kc::copy_to_device(masks.get(), c.masks.data(), masks.bytes()).is_ok());
  ASSERT_TRUE(kc::copy_to_device(rows.get(), c.slot_rows.data(), rows.bytes()).is_ok());
  ASSERT_TRUE(kc::apply_token_bitmask(logits.as<float>(), c.stride, c.vocab, masks.as<uint32_t>(), c.words,
                                      rows.as<int32_t>(), static_cast<int64_t>(c.slot_rows.size()), nullptr)
                  .is_ok());
  std::vector<float> got(c.logits.size());
  ASSERT_TRUE(kc::copy_to_host(got.data(), logits.get(), logits.bytes()).is_ok());
  expect_same(got, c.reference());
}

TEST_F(CudaTokenMask, BadShapesAreRefusedNamingTheProblem) {
  float* f = reinterpret_cast<float*>(16);
  auto st = kc::apply_token_bitmask(f, 1000, 999, reinterpret_cast<const uint32_t*>(16), 31,
                                    reinterpret_cast<const int32_t*>(16), 1, nullptr);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("words_per_row 31 < ceil(vocab / 32) = 32"), std::string::npos) << st.message();
  EXPECT_FALSE(kc::apply_token_bitmask(f, 10, 999, nullptr, 32, nullptr, 1, nullptr).is_ok());
  EXPECT_TRUE(kc::apply_token_bitmask(f, 1000, 999, nullptr, 32, nullptr, 0, nullptr).is_ok());  // nothing to do
}

TEST_F(CudaTokenMask, StagerUploadsOnItsStreamAndMasksBehindIt) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  kc::TokenMaskStager stager;
  kc::DeviceBuffer logits;
  // Two rounds with different masks through the same staging memory.
  for (uint32_t seed : {11u, 12u}) {
    Case c(seed);
    if (seed == 12u) c.slot_rows = {-1, 2, 1, -1};
    ASSERT_TRUE(logits.reserve(static_cast<int64_t>(c.logits.size() * 4)).is_ok());
    ASSERT_TRUE(kc::copy_to_device_async(logits.get(), c.logits.data(), static_cast<int64_t>(c.logits.size() * 4), stream).is_ok());
    auto host = stager.host_masks(static_cast<int64_t>(c.slot_rows.size()), c.words);
    ASSERT_TRUE(host.is_ok()) << host.status().message();
    std::copy(c.masks.begin(), c.masks.end(), *host);
    ASSERT_TRUE(stager.apply(logits.as<float>(), c.stride, c.vocab, c.slot_rows.data(), stream).is_ok());
    std::vector<float> got(c.logits.size());
    ASSERT_TRUE(kc::copy_to_host_async(got.data(), logits.get(), static_cast<int64_t>(got.size() * 4), stream).is_ok());
    ASSERT_TRUE(kc::stream_synchronize(stream).is_ok());
    expect_same(got, c.reference());
  }
  EXPECT_FALSE(stager.apply(logits.as<float>(), 1003, 999, nullptr, stream).is_ok());  // no host_masks() first
  cudaStreamDestroy(stream);
}

}  // namespace
