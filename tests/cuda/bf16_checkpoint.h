// The bf16 checks of the GPU model tests: a fixture checkpoint's fp32 tensors rounded to bf16,
// and how far a bf16 GPU run lands from an fp32 CPU run on those same rounded weights. The
// bounds come from each test: they differ by family.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/cuda/device_model.h"
#include "tests/common/model_fixture.h"
#include "tests/cuda/bf16_bits.h"
#include "tests/cuda/device_model_util.h"

namespace di::test {

// Every F32 tensor of `tensors` rounded to nearest-even bf16 (the fixtures hold no NaN).
inline void round_to_bf16(std::vector<RawTensor>& tensors) {
  for (RawTensor& t : tensors) {
    if (t.dtype != "F32") continue;
    std::vector<uint8_t> b(t.bytes.size() / 2);
    for (size_t i = 0; i * 4 < t.bytes.size(); ++i) {
      float f;
      std::memcpy(&f, t.bytes.data() + 4 * i, 4);
      const uint16_t h = di::test::to_bf16(f);
      std::memcpy(b.data() + 2 * i, &h, 2);
    }
    t.bytes = std::move(b);
    t.dtype = "BF16";
  }
}

struct Bf16Gap {
  double rel_l2 = 0;     // ||got - ref|| / ||ref|| over all logits
  int argmax_agree = 0;  // rows whose argmax is the same
};

inline Bf16Gap bf16_gap(const std::vector<float>& got, const std::vector<float>& ref, int64_t vocab) {
  double num = 0, den = 0;
  Bf16Gap gap;
  for (size_t r = 0; r * vocab < ref.size(); ++r) {
    for (int64_t v = 0; v < vocab; ++v) {
      const double d = got[r * vocab + v] - ref[r * vocab + v];
      num += d * d;
      den += double(ref[r * vocab + v]) * ref[r * vocab + v];
    }
    gap.argmax_agree += argmax(got.data() + r * vocab, vocab) == argmax(ref.data() + r * vocab, vocab);
  }
  gap.rel_l2 = std::sqrt(num / den);
  return gap;
}

// The fixture's checkpoint rounded to bf16 (written out by `make_dir`) through the GPU, which must
// take its bf16 path, and through the CPU in fp32 (`cpu_threads`) on the same weights: the gap.
inline void bf16_gap_on_same_weights(const Fixture& f,
                                     const std::function<std::string(const std::vector<RawTensor>&)>& make_dir,
                                     int cpu_threads, Bf16Gap* gap) {
  std::vector<RawTensor> tensors = read_all(f.dir);
  round_to_bf16(tensors);
  const std::string dir = make_dir(tensors);
  auto gpu = load_on(dir, "cuda");
  ASSERT_TRUE(gpu);
  auto* cm = dynamic_cast<engine::cuda::DeviceModel*>(gpu.get());
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->dtype(), kernels::cuda::DType::kBF16);
  auto cpu = load_on(dir, "cpu", cpu_threads);
  ASSERT_TRUE(cpu);
  const int32_t n = static_cast<int32_t>(f.all_ids.size());
  const std::vector<float> ref = run_chunks(*cpu, f.all_ids, {n});
  const std::vector<float> got = run_device_chunks(*gpu, f.all_ids, {n});
  ASSERT_EQ(got.size(), ref.size());
  *gap = bf16_gap(got, ref, f.vocab);
}

// That gap, reported under `label` and bounded: above zero (bf16 cannot be exact: zero means the
// bf16 path did not run), below `max_rel_l2`, and at least `min_argmax_agree` rows agreeing.
inline void expect_bf16_gap_within(const Fixture& f, const std::string& label,
                                   const std::function<std::string(const std::vector<RawTensor>&)>& make_dir,
                                   int cpu_threads, double max_rel_l2, int min_argmax_agree) {
  Bf16Gap gap;
  ASSERT_NO_FATAL_FAILURE(bf16_gap_on_same_weights(f, make_dir, cpu_threads, &gap));
  std::printf("%s bf16 (cuda) vs fp32 (cpu) on the same weights: rel l2 %.3g, argmax agreement %d/%zu\n",
              label.c_str(), gap.rel_l2, gap.argmax_agree, f.all_ids.size());
  EXPECT_GT(gap.rel_l2, 0.0);
  EXPECT_LT(gap.rel_l2, max_rel_l2);
  EXPECT_GE(gap.argmax_agree, min_argmax_agree);
}

}  // namespace di::test
