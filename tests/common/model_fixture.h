// The transformers fixtures every model test shares: tests/fixtures/model_<family>/<name>/ holds
// config.json, model.safetensors, fixture.json (prompt and greedy ids) and logits.f32. Also runs a
// model in chunks with one ContiguousSequenceCache, loads a model on a device, and writes scratch
// checkpoints for loader tests.
// Which fixtures exist is the business of each family's own header, not of this one.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/safetensors.h"

namespace di::test {

namespace fs = std::filesystem;
using nlohmann::json;

struct FixtureId {
  std::string family;  // folder model_<family>
  std::string name;
};

inline void PrintTo(const FixtureId& id, std::ostream* os) { *os << id.name; }

inline std::string fixture_dir(const FixtureId& id) {
  return std::string(DI_FIXTURES_DIR) + "/model_" + id.family + "/" + id.name;
}

struct Fixture {
  std::string dir;
  json meta;
  std::vector<int32_t> prompt;
  std::vector<int32_t> greedy;
  std::vector<int32_t> all_ids;  // prompt then greedy: the rows of `logits`
  std::vector<float> logits;     // [all_ids.size(), vocab]
  int64_t vocab = 0;
};

inline Fixture load_fixture(const FixtureId& id) {
  Fixture f;
  f.dir = fixture_dir(id);
  std::ifstream in(f.dir + "/fixture.json");
  f.meta = json::parse(in);
  f.prompt = f.meta["prompt_ids"].get<std::vector<int32_t>>();
  f.greedy = f.meta["greedy_ids"].get<std::vector<int32_t>>();
  f.all_ids = f.prompt;
  f.all_ids.insert(f.all_ids.end(), f.greedy.begin(), f.greedy.end());
  f.vocab = f.meta["vocab_size"].get<int64_t>();
  const int64_t rows = f.meta["logits_rows"].get<int64_t>();
  f.logits.resize(static_cast<size_t>(rows * f.vocab));
  std::ifstream lf(f.dir + "/logits.f32", std::ios::binary);
  lf.read(reinterpret_cast<char*>(f.logits.data()), static_cast<std::streamsize>(f.logits.size() * 4));
  EXPECT_TRUE(lf.good()) << "short logits file in " << f.dir;
  EXPECT_EQ(rows, static_cast<int64_t>(f.all_ids.size()));
  return f;
}

inline json read_config(const FixtureId& id) {
  std::ifstream in(fixture_dir(id) + "/config.json");
  return json::parse(in);
}

// max_v |a - b| / max_v |ref| for one row of `vocab` logits.
inline double row_rel_err(const float* a, const float* ref, int64_t vocab) {
  double diff = 0, mx = 0;
  for (int64_t v = 0; v < vocab; ++v) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[v]) - ref[v]));
    mx = std::max(mx, std::fabs(static_cast<double>(ref[v])));
  }
  return diff / mx;
}

// The worst row_rel_err over all rows of two [rows, vocab] arrays of equal size.
inline double worst_rel_err(const std::vector<float>& got, const std::vector<float>& ref, int64_t vocab) {
  double worst = 0;
  for (size_t r = 0; r * vocab < ref.size(); ++r)
    worst = std::max(worst, row_rel_err(got.data() + r * vocab, ref.data() + r * vocab, vocab));
  return worst;
}

inline int32_t argmax(const float* row, int64_t vocab) {
  return static_cast<int32_t>(std::max_element(row, row + vocab) - row);
}

// `dir`'s model on `device` ("cpu", "cuda", "auto") with `num_threads` host threads; nullptr, the
// failure recorded, if it does not load.
inline std::unique_ptr<engine::Model> load_on(const std::string& dir, const std::string& device,
                                             int num_threads = 2) {
  engine::ModelOptions opts;
  opts.device = device;
  opts.num_threads = num_threads;
  auto m = engine::load_model(dir, opts);
  EXPECT_TRUE(m.is_ok()) << device << ": " << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

// Why `dir` fails to load with default options, or ok.
inline Status load_status(const std::string& dir) {
  auto m = engine::load_model(dir, {});
  return m.is_ok() ? Status::ok() : m.status();
}

// `st` is an error whose message names `what`.
inline void expect_error_mentions(const Status& st, const std::string& what) {
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
}

// Runs `ids` through `model` in the given chunk sizes (cycled) with `cache` (room for all of
// them); a logits row per token, or nothing after a failed forward.
inline std::vector<float> run_chunks(engine::Model& model, const std::vector<int32_t>& ids,
                                     const std::vector<int32_t>& chunks, engine::SequenceCache& cache) {
  std::vector<float> all, logits;
  size_t pos = 0, c = 0;
  while (pos < ids.size()) {
    const int32_t n = std::min<int32_t>(chunks[c++ % chunks.size()], static_cast<int32_t>(ids.size() - pos));
    engine::ForwardBatch batch;
    batch.seqs.push_back({ids.data() + pos, n, static_cast<int64_t>(pos), &cache, true});
    Status st = model.forward(batch, logits);
    EXPECT_TRUE(st.is_ok()) << st.message();
    if (!st.is_ok()) return {};
    all.insert(all.end(), logits.begin(), logits.end());
    pos += static_cast<size_t>(n);
  }
  return all;
}

// The same with a fresh host cache.
inline std::vector<float> run_chunks(engine::Model& model, const std::vector<int32_t>& ids,
                                     const std::vector<int32_t>& chunks) {
  engine::ContiguousSequenceCache cache(model.cache_groups(), static_cast<int64_t>(ids.size()));
  return run_chunks(model, ids, chunks, cache);
}

// A fresh scratch directory under the build tree; `area` keeps test binaries that run in
// parallel out of each other's way.
inline std::string scratch_dir_in(const std::string& area, const std::string& name) {
  const fs::path p = fs::path(DI_BINARY_DIR) / "tests_scratch" / area / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

inline std::vector<RawTensor> read_all(const std::string& dir) {
  auto ck = engine::Checkpoint::open(dir);
  EXPECT_TRUE(ck.is_ok()) << ck.status().message();
  std::vector<RawTensor> out;
  if (!ck.is_ok()) return out;
  for (const std::string& n : (*ck)->names()) {
    const engine::TensorView* t = (*ck)->find(n);
    out.push_back({n, t->dtype_text, t->shape, std::vector<uint8_t>(t->data, t->data + t->nbytes)});
  }
  return out;
}

inline void write_safetensors(const std::string& path, const std::vector<RawTensor>& tensors) {
  json header = json::object();
  uint64_t off = 0;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes.size()}}};
    off += t.bytes.size();
  }
  std::string h = header.dump();
  while (h.size() % 8) h += ' ';  // the format aligns the data section to 8 bytes
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << h;
  for (const RawTensor& t : tensors)
    out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
}

// A scratch model directory (in `area`) holding `config` and `tensors`.
inline std::string make_model_dir_in(const std::string& area, const std::string& scratch, const json& config,
                                     const std::vector<RawTensor>& tensors) {
  const std::string dir = scratch_dir_in(area, scratch);
  std::ofstream(dir + "/config.json") << config.dump(1);
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

}  // namespace di::test
