// What the GPU model tests share: a one-sequence device cache, running a prompt through it in
// chunks (or on the GPU and the CPU side by side), naming the first
// row past a tolerance, and the checks every CUDA model must pass whatever its family.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/llm.h"
#include "engine/model/cuda/device_cache.h"
#include "tests/common/model_checks.h"
#include "tests/common/model_fixture.h"

namespace di::test {

inline std::unique_ptr<engine::SequenceCache> device_cache(engine::Model& m, int64_t tokens) {
  auto c = engine::cuda::DeviceSequenceCache::create(m.cache_groups(), tokens);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.is_ok() ? std::move(c).value() : nullptr;
}

// `dir` on the GPU, its decode steps replaying CUDA graphs or, with `enforce_eager`, launching
// each kernel; null (the failure recorded) if it did not load.
inline std::unique_ptr<engine::Model> load_on_cuda(const std::string& dir, bool enforce_eager) {
  engine::ModelOptions opts;
  opts.device = "cuda";
  opts.enforce_eager = enforce_eager;
  auto m = engine::load_model(dir, opts);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

// Runs `ids` in the given chunk sizes (cycled) with one device cache; a logits row per token.
inline std::vector<float> run_device_chunks(engine::Model& model, const std::vector<int32_t>& ids,
                                            const std::vector<int32_t>& chunks) {
  auto cache = device_cache(model, static_cast<int64_t>(ids.size()));
  if (!cache) return {};
  return run_chunks(model, ids, chunks, *cache);
}

// The first row whose error exceeds `tol`, or -1.
inline int64_t first_bad_row(const std::vector<float>& got, const std::vector<float>& ref, int64_t vocab, double tol) {
  for (size_t r = 0; r * vocab < ref.size(); ++r)
    if (row_rel_err(got.data() + r * vocab, ref.data() + r * vocab, vocab) > tol) return static_cast<int64_t>(r);
  return -1;
}

// Loads `dir` on the GPU and on the CPU and runs `ids` through each as one prefill: the GPU's
// logits rows in *got, the CPU's in *ref. False (the failure recorded) if either could not run.
inline bool logits_on_cuda_and_cpu(const std::string& dir, const std::vector<int32_t>& ids, std::vector<float>* got,
                                   std::vector<float>* ref) {
  auto gpu = load_on(dir, "cuda");
  auto cpu = load_on(dir, "cpu");
  if (!gpu || !cpu) return false;
  EXPECT_EQ(gpu->info().device, "cuda");
  const int32_t n = static_cast<int32_t>(ids.size());
  *got = run_device_chunks(*gpu, ids, {n});
  *ref = run_chunks(*cpu, ids, {n});
  EXPECT_EQ(got->size(), ref->size());
  return !got->empty() && got->size() == ref->size();
}

// Greedy continuation of the fixture's prompt through a device cache.
inline std::vector<int32_t> greedy_on_device(engine::Model& model, const Fixture& f) {
  auto cache = device_cache(model, static_cast<int64_t>(f.all_ids.size()));
  if (!cache) return {};
  return greedy_continuation(model, f, *cache);
}

// One sequence's decode step batched with another's prefill of the same tokens: every logits row
// equals the row the one-sequence prefill computed, within `tol`.
inline void expect_batched_equals_alone(engine::Model& model, const Fixture& f, double tol) {
  const int64_t n = static_cast<int64_t>(f.all_ids.size());
  const std::vector<float> alone = run_device_chunks(model, f.all_ids, {static_cast<int32_t>(n)});
  const int32_t p = static_cast<int32_t>(f.prompt.size());
  auto a = device_cache(model, n), b = device_cache(model, n);
  ASSERT_TRUE(a && b);
  std::vector<float> logits;
  engine::ForwardBatch first;
  first.seqs.push_back({f.all_ids.data(), p, 0, a.get(), false});
  ASSERT_TRUE(model.forward(first, logits).is_ok());
  engine::ForwardBatch mixed;
  mixed.seqs.push_back({f.all_ids.data() + p, 1, p, a.get(), true});  // decode one token
  mixed.seqs.push_back({f.all_ids.data(), p + 1, 0, b.get(), true});  // prefill the same prefix
  ASSERT_TRUE(model.forward(mixed, logits).is_ok());
  ASSERT_EQ(static_cast<int64_t>(logits.size()), (2 + p) * f.vocab);
  EXPECT_LE(row_rel_err(logits.data(), alone.data() + p * f.vocab, f.vocab), tol);
  for (int32_t r = 0; r <= p; ++r)
    EXPECT_LE(row_rel_err(logits.data() + (1 + r) * f.vocab, alone.data() + r * f.vocab, f.vocab), tol) << r;
}

// A host-memory cache is refused with an error that says the model needs device memory.
inline void expect_host_cache_rejected(engine::Model& model, const Fixture& f) {
  engine::ContiguousSequenceCache host(model.cache_groups(), 8);
  engine::ForwardBatch batch;
  batch.seqs.push_back({f.prompt.data(), 4, 0, &host, false});
  std::vector<float> logits;
  const Status st = model.forward(batch, logits);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("device memory"), std::string::npos) << st.message();
}

}  // namespace di::test
