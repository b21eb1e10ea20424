// What the GPU model tests share: loading a fixture on a device, a one-sequence device cache,
// running a prompt through it in chunks, and naming the first row past a tolerance.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/llm.h"
#include "engine/model/cuda/device_cache.h"
#include "tests/common/model_fixture.h"

namespace di::test {

inline std::unique_ptr<engine::Model> load_on(const std::string& dir, const std::string& device) {
  engine::ModelOptions opts;
  opts.device = device;
  opts.num_threads = 2;
  auto m = engine::load_model(dir, opts);
  EXPECT_TRUE(m.is_ok()) << device << ": " << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

inline std::unique_ptr<engine::SequenceCache> device_cache(engine::Model& m, int64_t tokens) {
  auto c = engine::cuda::DeviceSequenceCache::create(m.cache_groups(), tokens);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.is_ok() ? std::move(c).value() : nullptr;
}

// Runs `ids` in the given chunk sizes (cycled) with one device cache; a logits row per token.
inline std::vector<float> run_device_chunks(engine::Model& model, const std::vector<int32_t>& ids,
                                            const std::vector<int32_t>& chunks) {
  auto cache = device_cache(model, static_cast<int64_t>(ids.size()));
  if (!cache) return {};
  std::vector<float> all, logits;
  size_t pos = 0, c = 0;
  while (pos < ids.size()) {
    const int32_t n = std::min<int32_t>(chunks[c++ % chunks.size()], static_cast<int32_t>(ids.size() - pos));
    engine::ForwardBatch batch;
    batch.seqs.push_back({ids.data() + pos, n, static_cast<int64_t>(pos), cache.get(), true});
    Status st = model.forward(batch, logits);
    EXPECT_TRUE(st.is_ok()) << st.message();
    if (!st.is_ok()) return {};
    all.insert(all.end(), logits.begin(), logits.end());
    pos += static_cast<size_t>(n);
  }
  return all;
}

// The first row whose error exceeds `tol`, or -1.
inline int64_t first_bad_row(const std::vector<float>& got, const std::vector<float>& ref, int64_t vocab, double tol) {
  for (size_t r = 0; r * vocab < ref.size(); ++r)
    if (row_rel_err(got.data() + r * vocab, ref.data() + r * vocab, vocab) > tol) return static_cast<int64_t>(r);
  return -1;
}

}  // namespace di::test
