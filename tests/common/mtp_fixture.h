// The MTP draft fixtures tools/mtp_reference/make_fixture.py writes (PyTorch: transformers for the
// main model, the reference MTP module for the drafts): per case, token ids t[0..N], the draft
// layer's logits at every known position (row i: the main model's hidden row i and t[i + 1],
// predicting t[i + 2]) and a draft chained from the last one on the reference's chosen tokens.
// Also the generic check of the chain through Model::propose_drafts, which any family runs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "tests/common/model_fixture.h"

namespace di::test {

struct MtpCase {
  std::vector<int32_t> ids;           // t[0..N]
  int32_t known = 0;                  // N: positions 0..N-1 have their next token known
  std::vector<int32_t> chain_tokens;  // d_0..d_{K-1}: the draft the reference chose
  std::vector<float> depth1;          // [N, vocab]: row i predicts t[i + 2]
  std::vector<float> chain;           // [K - 1, vocab]: row j - 1 is draft step j (predicts d_j)
};

struct MtpFixture {
  std::string dir;
  nlohmann::json meta;
  int64_t vocab = 0;
  std::vector<MtpCase> cases;
};

inline std::string mtp_fixture_path(const std::string& dir) { return dir + "/mtp_fixture.json"; }

inline MtpFixture load_mtp_fixture(const std::string& dir) {
  MtpFixture f;
  f.dir = dir;
  std::ifstream in(mtp_fixture_path(dir));
  f.meta = nlohmann::json::parse(in);
  f.vocab = f.meta.at("vocab_size").get<int64_t>();
  std::ifstream lf(dir + "/" + f.meta.at("logits_file").get<std::string>(), std::ios::binary);
  for (const auto& c : f.meta.at("cases")) {
    MtpCase m;
    m.ids = c.at("ids").get<std::vector<int32_t>>();
    m.known = c.at("known_positions").get<int32_t>();
    m.chain_tokens = c.at("chain_tokens").get<std::vector<int32_t>>();
    EXPECT_EQ(static_cast<size_t>(m.known) + 1, m.ids.size());
    EXPECT_GE(m.chain_tokens.size(), 1u);
    m.depth1.resize(static_cast<size_t>(m.known * f.vocab));
    m.chain.resize((m.chain_tokens.size() - 1) * static_cast<size_t>(f.vocab));
    lf.read(reinterpret_cast<char*>(m.depth1.data()), static_cast<std::streamsize>(m.depth1.size() * 4));
    lf.read(reinterpret_cast<char*>(m.chain.data()), static_cast<std::streamsize>(m.chain.size() * 4));
    EXPECT_TRUE(lf.good()) << "short logits file in " << dir;
    f.cases.push_back(std::move(m));
  }
  return f;
}

// Feeds the reference's draft tokens and keeps the worst relative error of each step's logits.
class FixtureChooser final : public engine::DraftChooser {
 public:
  FixtureChooser(const MtpCase& c, int64_t vocab) : c_(c), vocab_(vocab) {}
  int32_t choose(size_t, int32_t j, std::span<const float> logits) override {
    const float* ref = j == 0 ? c_.depth1.data() + (c_.known - 1) * vocab_ : c_.chain.data() + (j - 1) * vocab_;
    EXPECT_EQ(static_cast<int64_t>(logits.size()), vocab_);
    worst = std::max(worst, row_rel_err(logits.data(), ref, vocab_));
    ++steps;
    return c_.chain_tokens[static_cast<size_t>(j)];
  }
  double worst = 0;
  int32_t steps = 0;

 private:
  const MtpCase& c_;
  int64_t vocab_;
};

// The whole draft through the Model seam: one forward over t[0..N-1] keeping its hidden rows,
// then propose_drafts over the N known positions with a draft of K; returns the worst relative
// error of the K steps' logits (or a large value when the calls fail).
inline double chain_error(engine::Model& model, const MtpCase& c, int64_t vocab) {
  engine::ContiguousSequenceCache cache(model.cache_groups(), static_cast<int64_t>(c.ids.size() + c.chain_tokens.size()));
  engine::ForwardBatch batch;
  engine::SequenceInput in{c.ids.data(), c.known, 0, &cache, false, true};
  batch.seqs.push_back(in);
  std::vector<float> logits;
  Status st = model.forward(batch, logits);
  EXPECT_TRUE(st.is_ok()) << st.message();
  if (!st.is_ok()) return 1e9;
  engine::DraftInput d;
  d.batch_index = 0;
  d.cache = &cache;
  d.start_pos = 0;
  d.num_positions = c.known;
  d.next_tokens = c.ids.data() + 1;
  d.max_drafts = static_cast<int32_t>(c.chain_tokens.size());
  FixtureChooser chooser(c, vocab);
  st = model.propose_drafts(std::span<const engine::DraftInput>(&d, 1), chooser);
  EXPECT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(chooser.steps, d.max_drafts);
  if (!st.is_ok()) return 1e9;
  return chooser.worst;
}

}  // namespace di::test
