// The GPU model tests' comparisons against the CPU model (the reference each CUDA model must
// match op for op) and against one-prefill runs of the GPU itself: whole-sequence logits,
// truncated checkpoints layer by layer, and chunked prefill. Tolerances stay with each family.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/common/model_fixture.h"
#include "tests/cuda/device_model_util.h"

namespace di::test {

// Every position's logits on the GPU against the CPU (within `vs_cpu`) and transformers'
// fixture (within `vs_hf`), one prefill each.
inline void expect_cuda_matches_cpu_and_transformers(const Fixture& f, const std::string& label, double vs_cpu,
                                                     double vs_hf) {
  std::vector<float> got, ref;
  ASSERT_TRUE(logits_on_cuda_and_cpu(f.dir, f.all_ids, &got, &ref));
  ASSERT_EQ(got.size(), f.logits.size());
  ASSERT_EQ(ref.size(), f.logits.size());
  const double err_cpu = worst_rel_err(got, ref, f.vocab), err_hf = worst_rel_err(got, f.logits, f.vocab);
  std::printf("%s (cuda fp32): worst rel err vs cpu %.3g (first row over %.0e: %lld), vs transformers %.3g\n",
              label.c_str(), err_cpu, vs_cpu, static_cast<long long>(first_bad_row(got, ref, f.vocab, vs_cpu)),
              err_hf);
  EXPECT_LE(err_cpu, vs_cpu);
  EXPECT_LE(err_hf, vs_hf);
}

// Truncated copies of a checkpoint (its first k layers, k = 1..n_layers; `make_dir(k)` writes
// one) on the GPU and the CPU: the first k whose logits differ by more than `tol` names the layer
// to look at. `describe(k)` says what layer k - 1 is, for the report.
inline void expect_layer_by_layer_agrees(const Fixture& f, const std::string& label, int n_layers, double tol,
                                         const std::function<std::string(int)>& make_dir,
                                         const std::function<std::string(int)>& describe) {
  int first_bad = -1;
  for (int k = 1; k <= n_layers; ++k) {
    std::vector<float> got, ref;
    ASSERT_TRUE(logits_on_cuda_and_cpu(make_dir(k), f.all_ids, &got, &ref));
    const double err = worst_rel_err(got, ref, f.vocab);
    std::printf("%s: layers 0..%d%s: worst rel err vs cpu %.3g, first row over: %lld\n", label.c_str(), k - 1,
                describe(k).c_str(), err, static_cast<long long>(first_bad_row(got, ref, f.vocab, tol)));
    if (err > tol && first_bad < 0) first_bad = k - 1;
  }
  EXPECT_EQ(first_bad, -1) << "first differing layer: " << first_bad;
}

// expect_layer_by_layer_agrees on fixture `id`'s checkpoint cut to its first k layers: the
// config's num_hidden_layers set to k and `trim_config(config, k)` applied (the family's own
// per-layer keys), the tensors of layers k and up ("model.layers.N." or "layers.N.", MTP layers
// past the last one included) dropped.
inline void expect_truncated_checkpoints_agree(const FixtureId& id, double tol,
                                               const std::function<void(json&, int)>& trim_config,
                                               const std::function<std::string(int)>& describe) {
  const Fixture f = load_fixture(id);
  const json config = read_config(id);
  const std::vector<RawTensor> tensors = read_all(f.dir);
  const int n_layers = config["num_hidden_layers"].get<int>();
  auto layer_of = [](const std::string& name) {
    for (const char* prefix : {"model.layers.", "layers."})
      if (name.rfind(prefix, 0) == 0) return std::atoi(name.c_str() + std::strlen(prefix));
    return -1;
  };
  auto make_dir = [&](int k) {
    json c = config;
    c["num_hidden_layers"] = k;
    trim_config(c, k);
    std::vector<RawTensor> kept;
    for (const RawTensor& t : tensors)
      if (layer_of(t.name) < k) kept.push_back(t);
    return make_model_dir_in("cuda_layers", id.name + "_" + std::to_string(k), c, kept);
  };
  expect_layer_by_layer_agrees(f, id.name, n_layers, tol, make_dir, describe);
}

// The fixture's prompt in one chunk, then one token per forward.
inline std::vector<int32_t> prefill_then_decode_chunks(const Fixture& f) {
  std::vector<int32_t> chunks = {static_cast<int32_t>(f.prompt.size())};
  chunks.insert(chunks.end(), f.greedy.size(), 1);
  return chunks;
}

// Each way of chunking the sequence (chunk sizes cycled) gives the logits of one prefill on the
// same device cache kind, within `tol`.
inline void expect_device_chunking_equals_one_prefill(engine::Model& model, const Fixture& f, const std::string& label,
                                                      const std::vector<std::vector<int32_t>>& chunkings,
                                                      double tol) {
  const std::vector<float> full = run_device_chunks(model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  for (const std::vector<int32_t>& chunks : chunkings) {
    const std::vector<float> got = run_device_chunks(model, f.all_ids, chunks);
    ASSERT_EQ(got.size(), full.size());
    const double err = worst_rel_err(got, full, f.vocab);
    std::printf("%s (cuda): chunks starting %d: worst rel err vs one prefill %.3g (first row over: %lld)\n",
                label.c_str(), chunks[0], err, static_cast<long long>(first_bad_row(got, full, f.vocab, tol)));
    EXPECT_LE(err, tol) << "chunks starting " << chunks[0];
  }
}

}  // namespace di::test
