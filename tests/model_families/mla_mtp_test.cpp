// DeepSeek-V3's MTP layer on the CPU (model.layers.<num_hidden_layers>.*): the loader takes or
// skips it cleanly, its cache rows are declared with the decoder's, drafting leaves the cache
// as a run without drafts leaves it, and through the engine greedy output with drafts equals
// greedy output without them token for token (fixed and variable length, batched, from the
// prefix cache, under preemption), with the same logprobs at every step; random MTP weights
// accept almost nothing, so one variant's eh_proj is fitted to the model's own bigrams to get
// drafts accepted, chained ones included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/kv/cache_layout.h"
#include "engine/llm.h"
#include "engine/model/deepseek_v2/mla_model.h"
#include "tests/common/mtp_fixture.h"
#include "tests/common/spec_run.h"
#include "tests/model_families/mla_mtp_checkpoint.h"

namespace di::test {
namespace {

constexpr int64_t kNewTokens = 30;

engine::deepseek_v2::MlaModel* as_mla(engine::Model& m) { return dynamic_cast<engine::deepseek_v2::MlaModel*>(&m); }

std::unique_ptr<engine::Model> load(const std::string& dir) { return load_on(dir, "cpu", 2); }

// One checkpoint per test process, named after its first test: ctest runs this binary's tests
// in parallel processes, which must not rewrite each other's files.
const std::string& mtp_dir() {
  static const std::string dir =
      make_v3_mtp_checkpoint(std::string("v3_mtp_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  return dir;
}

// The fixture's prompt and three more of other lengths and contents.
std::vector<std::vector<int32_t>> prompts() {
  const std::vector<int32_t> p = load_fixture({"deepseek_v3", "deepseek_v3_qlora_yarn"}).prompt;
  std::vector<int32_t> rev(p.rbegin(), p.rend());
  return {p, std::vector<int32_t>(p.begin(), p.begin() + 7), std::vector<int32_t>(rev.begin(), rev.begin() + 19),
          {p[3]}};
}

TEST(MlaMtp, LoadsTheMtpLayerAndDeclaresItsCacheRows) {
  auto model = load(mtp_dir());
  ASSERT_TRUE(model);
  auto* mla = as_mla(*model);
  ASSERT_NE(mla, nullptr);
  EXPECT_EQ(mla->num_mtp_layers(), 1) << mla->weights().mtp_unavailable;
  EXPECT_TRUE(model->drafts_supported().is_ok());
  ASSERT_EQ(model->cache_groups().size(), 1u);
  EXPECT_EQ(model->cache_groups()[0].num_layers, mla->config().num_hidden_layers + 1);
  // DeepSeek's copies of embed_tokens and the head are the main model's, not second copies.
  EXPECT_EQ(mla->weights().mtp_layers[0].embed, mla->weights().embed);
  EXPECT_EQ(mla->weights().mtp_layers[0].head, mla->weights().lm_head);
}

TEST(MlaMtp, MtpTensorsAreSkippedWhenTheConfigDeclaresNone) {
  MtpCheckpointOptions o;
  o.num_nextn_predict_layers = 0;
  const std::string dir = make_v3_mtp_checkpoint("v3_mtp_off", o);
  auto model = load(dir);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->cache_groups()[0].num_layers, as_mla(*model)->config().num_hidden_layers);
  const Status st = model->drafts_supported();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("num_nextn_predict_layers 0"), std::string::npos) << st.message();
  // The main model is untouched by them: transformers' logits.
  const Fixture f = load_fixture({"deepseek_v3", "deepseek_v3_qlora_yarn"});
  const std::vector<float> got = run_chunks(*model, f.all_ids, {13});
  EXPECT_LT(worst_rel_err(got, f.logits, f.vocab), 1e-4);

  engine::EngineConfig c;
  c.max_model_len = 128;
  c.num_speculative_tokens = 2;
  auto llm = engine::LLM::load(dir, c, {});
  ASSERT_FALSE(llm.is_ok());
  EXPECT_EQ(llm.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(llm.status().message().find("MTP"), std::string::npos) << llm.status().message();
}

TEST(MlaMtp, AnIncompleteMtpLayerTurnsOnlyDraftingOff) {
  MtpCheckpointOptions o;
  o.drop = "eh_proj.weight";
  auto model = load(make_v3_mtp_checkpoint("v3_mtp_partial", o));
  ASSERT_TRUE(model);
  const Status st = model->drafts_supported();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("eh_proj"), std::string::npos) << st.message();
  std::printf("%s\n", st.message().c_str());
}

TEST(MlaMtp, AbsentSharedCopiesDraftAsStoredOnes) {
  MtpCheckpointOptions o;
  o.store_shared_copies = false;
  auto with = load(mtp_dir()), without = load(make_v3_mtp_checkpoint("v3_mtp_no_copies", o));
  ASSERT_TRUE(with && without);
  const std::vector<int32_t> ids = prompts()[0];
  std::vector<std::vector<float>> out;
  for (engine::Model* m : {with.get(), without.get()}) {
    auto* mla = as_mla(*m);
    engine::ContiguousSequenceCache cache(m->cache_groups(), static_cast<int64_t>(ids.size()));
    std::vector<float> logits(ids.size() * 256), hidden;
    ASSERT_TRUE(mla->forward_hidden({ids.data(), static_cast<int32_t>(ids.size()), 0, &cache, true}, logits.data(),
                                    &hidden)
                    .is_ok());
    const int32_t n = static_cast<int32_t>(ids.size()) - 1;
    const std::vector<float> prev = mla->main_hidden_for_mtp(hidden.data(), n);
    std::vector<float> mtp(static_cast<size_t>(n) * 256);
    ASSERT_TRUE(mla->mtp_forward(0, {ids.data() + 1, n, 0, &cache, true}, prev.data(), mtp.data(), nullptr).is_ok());
    out.push_back(mtp);
  }
  EXPECT_EQ(out[0], out[1]);
}

// The MTP layer's rows written chunk by chunk (prefill chunks, decode steps) read back as one
// pass over the whole sequence: the same draft logits at every position.
TEST(MlaMtp, DraftLogitsDoNotDependOnHowTheSequenceWasChunked) {
  auto model = load(mtp_dir());
  ASSERT_TRUE(model);
  auto* mla = as_mla(*model);
  const std::vector<int32_t> ids = prompts()[0];
  const int32_t n = static_cast<int32_t>(ids.size()) - 1;
  const int64_t V = mla->config().vocab_size;
  auto run = [&](const std::vector<int32_t>& chunks) {
    engine::ContiguousSequenceCache cache(model->cache_groups(), static_cast<int64_t>(ids.size()));
    std::vector<float> all;
    int32_t pos = 0;
    size_t c = 0;
    while (pos < n) {
      const int32_t len = std::min(chunks[c++ % chunks.size()], n - pos);
      std::vector<float> logits(static_cast<size_t>(len * V)), hidden, mtp(static_cast<size_t>(len * V));
      EXPECT_TRUE(mla->forward_hidden({ids.data() + pos, len, pos, &cache, true}, logits.data(), &hidden).is_ok());
      const std::vector<float> prev = mla->main_hidden_for_mtp(hidden.data(), len);
      EXPECT_TRUE(mla->mtp_forward(0, {ids.data() + pos + 1, len, pos, &cache, true}, prev.data(), mtp.data(), nullptr)
                      .is_ok());
      all.insert(all.end(), mtp.begin(), mtp.end());
      pos += len;
    }
    return all;
  };
  const std::vector<float> whole = run({n});
  for (const std::vector<int32_t>& chunks : std::vector<std::vector<int32_t>>{{1}, {5, 1, 9}, {16}}) {
    const std::vector<float> got = run(chunks);
    ASSERT_EQ(got.size(), whole.size());
    EXPECT_LT(worst_rel_err(got, whole, V), 1e-5) << "chunks " << chunks[0];
  }
}

// The MTP layer's block and head are a decoder layer and a head like the main model's: a one-layer
// deepseek_v3 made of its block, with shared_head.norm as the final norm and an embedding table
// whose row i is the block's input at position i (eh_proj of the normed pair, computed here by
// plain loops), gives the same logits as mtp_forward at every position.
TEST(MlaMtp, MtpLayerEqualsAOneLayerModelOfItsBlock) {
  auto model = load(mtp_dir());
  ASSERT_TRUE(model);
  auto* mla = as_mla(*model);
  const engine::deepseek_v2::MlaConfig& c = mla->config();
  const std::vector<int32_t> ids = prompts()[0];
  const int32_t n = static_cast<int32_t>(ids.size()) - 1;
  const int64_t H = c.hidden_size, V = c.vocab_size;
  ASSERT_LE(n, V);
  engine::ContiguousSequenceCache cache(model->cache_groups(), static_cast<int64_t>(ids.size()));
  std::vector<float> logits(static_cast<size_t>(n * V)), hidden, mtp(static_cast<size_t>(n * V));
  ASSERT_TRUE(mla->forward_hidden({ids.data(), n, 0, &cache, true}, logits.data(), &hidden).is_ok());
  const std::vector<float> prev = mla->main_hidden_for_mtp(hidden.data(), n);
  ASSERT_TRUE(mla->mtp_forward(0, {ids.data() + 1, n, 0, &cache, true}, prev.data(), mtp.data(), nullptr).is_ok());

  // The block's inputs, by the formula.
  std::vector<RawTensor> all = read_all(mtp_dir());
  auto find = [&](const std::string& name) -> const float* {
    for (const RawTensor& t : all)
      if (t.name == name) return reinterpret_cast<const float*>(t.bytes.data());
    ADD_FAILURE() << "no tensor " << name;
    return nullptr;
  };
  const std::string p = "model.layers." + std::to_string(c.num_hidden_layers) + ".";
  const float *embed = find("model.embed_tokens.weight"), *enorm = find(p + "enorm.weight");
  const float *hnorm = find(p + "hnorm.weight"), *eh = find(p + "eh_proj.weight");
  ASSERT_TRUE(embed && enorm && hnorm && eh);
  auto normed = [&](const float* x, const float* w) {
    double ss = 0;
    for (int64_t d = 0; d < H; ++d) ss += static_cast<double>(x[d]) * x[d];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(H) + c.rms_norm_eps);
    std::vector<double> y(static_cast<size_t>(H));
    for (int64_t d = 0; d < H; ++d) y[d] = x[d] * r * w[d];
    return y;
  };
  std::vector<float> table(static_cast<size_t>(V * H), 0.0f);
  for (int32_t i = 0; i < n; ++i) {
    const std::vector<double> e = normed(embed + static_cast<int64_t>(ids[i + 1]) * H, enorm);
    const std::vector<double> h = normed(prev.data() + i * H, hnorm);
    for (int64_t o = 0; o < H; ++o) {
      double acc = 0;
      for (int64_t d = 0; d < H; ++d) acc += eh[o * 2 * H + d] * e[d] + eh[o * 2 * H + H + d] * h[d];
      table[static_cast<size_t>(i * H + o)] = static_cast<float>(acc);
    }
  }
  // The one-layer model: layer 0 = the MTP block.
  json config = read_config({"deepseek_v3", "deepseek_v3_qlora_yarn"});
  config["num_hidden_layers"] = 1;
  config["first_k_dense_replace"] = 0;
  std::vector<RawTensor> one;
  for (const RawTensor& t : all) {
    RawTensor u = t;
    if (t.name.rfind(p, 0) == 0) {
      const std::string rest = t.name.substr(p.size());
      if (rest == "shared_head.norm.weight") {
        u.name = "model.norm.weight";
      } else if (rest.rfind("enorm", 0) == 0 || rest.rfind("hnorm", 0) == 0 || rest.rfind("eh_proj", 0) == 0 ||
                 rest.rfind("shared_head", 0) == 0 || rest.rfind("embed_tokens", 0) == 0) {
        continue;
      } else {
        u.name = "model.layers.0." + rest;
      }
    } else if (t.name == "model.embed_tokens.weight") {
      std::memcpy(u.bytes.data(), table.data(), u.bytes.size());
    } else if (t.name != "lm_head.weight") {
      continue;
    }
    one.push_back(std::move(u));
  }
  auto block_model = load(make_model_dir_in("mla_mtp", "v3_mtp_block", config, one));
  ASSERT_TRUE(block_model);
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) rows[i] = i;
  const std::vector<float> want = run_chunks(*block_model, rows, {n});
  ASSERT_EQ(want.size(), mtp.size());
  const double err = worst_rel_err(mtp, want, V);
  std::printf("MTP layer vs a one-layer model of its block: worst relative error %.3g\n", err);
  EXPECT_LT(err, 1e-5);
}

// Records each draft step's logits and continues with its argmax.
class ArgmaxChooser final : public engine::DraftChooser {
 public:
  int32_t choose(size_t, int32_t, std::span<const float> logits) override {
    rows.insert(rows.end(), logits.begin(), logits.end());
    return argmax(logits.data(), static_cast<int64_t>(logits.size()));
  }
  std::vector<float> rows;
};

// A draft's steps write past the known positions only in scratch: the cache afterwards holds
// exactly what the known positions wrote, and the same draft comes out twice.
TEST(MlaMtp, DraftStepsLeaveNoTraceInTheCache) {
  auto model = load(mtp_dir());
  ASSERT_TRUE(model);
  const std::vector<int32_t> ids = prompts()[0];
  const int32_t n = static_cast<int32_t>(ids.size()) - 1, L = as_mla(*model)->config().num_hidden_layers;
  const int64_t entry = model->cache_groups()[0].entry_bytes, total = static_cast<int64_t>(ids.size()) + 8;
  engine::ContiguousSequenceCache cache(model->cache_groups(), total);
  for (int32_t l = 0; l <= L; ++l)
    for (int64_t p = 0; p < total; ++p) std::memset(cache.entry(0, l, p), 0x5a, static_cast<size_t>(entry));
  engine::ForwardBatch batch;
  batch.seqs.push_back({ids.data(), n, 0, &cache, false, true});
  std::vector<float> logits;
  ASSERT_TRUE(model->forward(batch, logits).is_ok());
  engine::DraftInput d;
  d.cache = &cache;
  d.num_positions = n;
  d.next_tokens = ids.data() + 1;
  d.max_drafts = 6;
  ArgmaxChooser a, b;
  ASSERT_TRUE(model->propose_drafts(std::span<const engine::DraftInput>(&d, 1), a).is_ok());
  EXPECT_EQ(a.rows.size(), static_cast<size_t>(6 * 256));
  for (int64_t p = n; p < total; ++p) {
    const auto* e = static_cast<const uint8_t*>(cache.entry(0, L, p));
    EXPECT_TRUE(std::all_of(e, e + entry, [](uint8_t x) { return x == 0x5a; })) << "MTP row " << p << " was written";
  }
  ASSERT_TRUE(model->propose_drafts(std::span<const engine::DraftInput>(&d, 1), b).is_ok());
  EXPECT_EQ(a.rows, b.rows);
}

using GenRun = SpecRun;

engine::EngineConfig config(int32_t drafts, int32_t variable) { return spec_config(drafts, variable, 128, 48); }

engine::SamplingParams greedy_params(bool logprobs = false) {
  engine::SamplingParams p;
  p.temperature = 0;
  p.max_tokens = kNewTokens;
  p.ignore_eos = true;
  if (logprobs) {
    p.logprobs = true;
    p.top_logprobs = 5;
  }
  return p;
}

GenRun generate(const engine::EngineConfig& c, const engine::SamplingParams& p, int repeats = 1,
                const std::string& dir = mtp_dir()) {
  engine::ModelOptions opts;
  opts.num_threads = 2;
  return spec_generate(dir, c, opts, prompts(), p, repeats);
}

void expect_same_tokens(const GenRun& want, const GenRun& got, const std::string& label) {
  di::test::expect_same_tokens(want, got, label, kNewTokens);
  std::printf("%s: %lld drafts, %lld accepted, %lld steps\n", label.c_str(),
              static_cast<long long>(got.metrics.value("spec_draft_tokens", 0)),
              static_cast<long long>(got.metrics.value("spec_accepted_tokens", 0)),
              static_cast<long long>(got.metrics.value("steps", 0)));
}

TEST(MlaMtp, GreedyWithDraftsEqualsWithoutForFixedAndVariableLength) {
  const GenRun off = generate(config(0, 0), greedy_params());
  // Off is transformers' continuation of the fixture's prompt.
  const Fixture f = load_fixture({"deepseek_v3", "deepseek_v3_qlora_yarn"});
  ASSERT_FALSE(off.outputs.empty());
  const auto& first = off.outputs[0].outputs[0].token_ids;
  EXPECT_EQ(std::vector<int32_t>(first.begin(), first.begin() + static_cast<int64_t>(f.greedy.size())), f.greedy);
  for (int32_t k : {1, 3}) {
    const GenRun fixed = generate(config(k, 0), greedy_params());
    expect_same_tokens(off, fixed, "fixed k=" + std::to_string(k));
    EXPECT_GT(fixed.metrics.value("spec_draft_tokens", 0), 0) << "k=" << k;
    expect_consistent_draft_metrics(fixed, k, "fixed k=" + std::to_string(k));
  }
  const GenRun variable = generate(config(5, 1), greedy_params());
  expect_same_tokens(off, variable, "variable");
}

TEST(MlaMtp, GreedyWithDraftsEqualsWithoutFromThePrefixCache) {
  const GenRun off = generate(config(0, 0), greedy_params());
  const GenRun on = generate(config(3, 0), greedy_params(), 2);
  expect_same_tokens(off, on, "prefix cache");
  EXPECT_GT(on.metrics.value("prefix_cache_hits", 0), 0);
}

TEST(MlaMtp, GreedyWithDraftsEqualsWithoutUnderPreemption) {
  const GenRun off = generate(config(0, 0), greedy_params());
  engine::EngineConfig c = config(4, 0);
  auto probe = load(mtp_dir());
  ASSERT_TRUE(probe);
  auto layout = engine::make_cache_layout(probe->cache_groups(), c.block_size);
  ASSERT_TRUE(layout.is_ok());
  // Room for the longest sequence (40 + 30 tokens) and two blocks: the others are preempted and
  // recomputed.
  c.max_model_len = 72;
  c.kv_cache_bytes = layout->slot_bytes * c.max_num_seqs * 2 + layout->block_bytes * (layout->blocks_needed(72) + 2);
  const GenRun on = generate(c, greedy_params());
  expect_same_tokens(off, on, "preemption");
  EXPECT_GT(on.metrics.value("num_preemptions", 0), 0) << "the budget was meant to force preemption";
  EXPECT_GT(on.metrics.value("spec_draft_tokens", 0), 0);
}

// Rejected drafts ran through every layer and wrote latent rows; the logprobs of every later
// step equal a run that never drafted.
TEST(MlaMtp, RejectedDraftsLeaveTheCacheAsANonDraftingRun) {
  const GenRun off = generate(config(0, 0), greedy_params(true));
  const GenRun on = generate(config(5, 0), greedy_params(true));
  expect_same_tokens(off, on, "logprobs");
  ASSERT_GT(on.metrics.value("spec_draft_tokens", 0), on.metrics.value("spec_accepted_tokens", 0));
  const double worst = worst_logprob_difference(off, on);
  std::printf("worst |logprob difference| with drafts: %.3g\n", worst);
  EXPECT_LT(worst, 1e-3);
}

// Solves G z = b in place (G [m, m] symmetric positive definite, row-major) by Gaussian elimination.
void solve(std::vector<double> g, std::vector<double>& b, int64_t m) {
  for (int64_t k = 0; k < m; ++k) {
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = g[r * m + k] / g[k * m + k];
      for (int64_t c = k; c < m; ++c) g[r * m + c] -= f * g[k * m + c];
      b[r] -= f * b[k];
    }
  }
  for (int64_t k = m - 1; k >= 0; --k) {
    for (int64_t c = k + 1; c < m; ++c) b[k] -= g[k * m + c] * b[c];
    b[k] /= g[k * m + k];
  }
}

// The MTP layer with an eh_proj fitted (least squares, exactly) to the bigrams of the model's own
// greedy continuations in `off` (a -> the token after a, first seen wins), its block nearly an
// identity (o_proj and the experts' down_proj scaled by 0.01) and shared_head.norm ones: it
// drafts what the model will say most of the time, so drafts are accepted, chained ones too.
std::string make_bigram_mtp(const GenRun& off) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  const auto ps = prompts();
  for (size_t i = 0; i < off.outputs.size(); ++i) {
    std::vector<int32_t> x = {ps[i].back()};
    const auto& out = off.outputs[i].outputs[0].token_ids;
    x.insert(x.end(), out.begin(), out.end());
    for (size_t j = 0; j + 1 < x.size(); ++j) {
      bool seen = false;
      for (const auto& pr : pairs) seen = seen || pr.first == x[j];
      if (!seen && pairs.size() < 48) pairs.emplace_back(x[j], x[j + 1]);
    }
  }
  std::vector<RawTensor> all = read_all(mtp_dir());
  auto find = [&](const std::string& name) -> RawTensor* {
    for (RawTensor& t : all)
      if (t.name == name) return &t;
    ADD_FAILURE() << "no tensor " << name;
    return nullptr;
  };
  auto f32 = [](RawTensor* t) { return reinterpret_cast<float*>(t->bytes.data()); };
  const json config = read_config({"deepseek_v3", "deepseek_v3_qlora_yarn"});
  const int64_t H = config.at("hidden_size").get<int64_t>(), m = static_cast<int64_t>(pairs.size());
  const double eps = config.at("rms_norm_eps").get<double>();
  const std::string p = "model.layers." + std::to_string(config.at("num_hidden_layers").get<int32_t>()) + ".";
  const float* embed = f32(find("model.embed_tokens.weight"));
  const float* head = f32(find("lm_head.weight"));
  const float* enorm = f32(find(p + "enorm.weight"));
  // E [m, H]: the normed embeddings the layer sees; Y [m, H]: the head rows of their successors.
  std::vector<double> e(static_cast<size_t>(m * H)), y(e.size());
  for (int64_t k = 0; k < m; ++k) {
    const float* row = embed + static_cast<int64_t>(pairs[k].first) * H;
    double ss = 0;
    for (int64_t d = 0; d < H; ++d) ss += static_cast<double>(row[d]) * row[d];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(H) + eps);
    for (int64_t d = 0; d < H; ++d) {
      e[k * H + d] = row[d] * r * enorm[d];
      y[k * H + d] = head[static_cast<int64_t>(pairs[k].second) * H + d];
    }
  }
  // W = Y^T (E E^T)^-1 E: W e_k = y_k for every pair (m <= H).
  std::vector<double> g(static_cast<size_t>(m * m));
  for (int64_t a = 0; a < m; ++a)
    for (int64_t b = 0; b < m; ++b) {
      double acc = 0;
      for (int64_t d = 0; d < H; ++d) acc += e[a * H + d] * e[b * H + d];
      g[a * m + b] = acc;
    }
  std::vector<double> a(static_cast<size_t>(m * H));  // (E E^T)^-1 E, column by column
  for (int64_t d = 0; d < H; ++d) {
    std::vector<double> col(static_cast<size_t>(m));
    for (int64_t k = 0; k < m; ++k) col[k] = e[k * H + d];
    solve(g, col, m);
    for (int64_t k = 0; k < m; ++k) a[k * H + d] = col[k];
  }
  float* eh = f32(find(p + "eh_proj.weight"));
  for (int64_t o = 0; o < H; ++o)
    for (int64_t d = 0; d < 2 * H; ++d) {
      double acc = 0;
      if (d < H)
        for (int64_t k = 0; k < m; ++k) acc += y[k * H + o] * a[k * H + d];
      eh[o * 2 * H + d] = static_cast<float>(acc);
    }
  float* norm = f32(find(p + "shared_head.norm.weight"));
  for (int64_t d = 0; d < H; ++d) norm[d] = 1.0f;
  for (RawTensor& t : all) {
    const bool residual_out = t.name.rfind(p, 0) == 0 && (t.name.find("o_proj.weight") != std::string::npos ||
                                                          t.name.find("down_proj.weight") != std::string::npos);
    if (!residual_out) continue;
    float* v = f32(&t);
    for (size_t i = 0; i < t.bytes.size() / 4; ++i) v[i] *= 0.01f;
  }
  json c = config;
  c["num_nextn_predict_layers"] = 1;
  return make_model_dir_in("mla_mtp", "v3_mtp_bigram", c, all);
}

TEST(MlaMtp, AcceptedDraftsKeepGreedyOutputUnchanged) {
  const GenRun off = generate(config(0, 0), greedy_params());
  const std::string dir = make_bigram_mtp(off);
  for (int32_t k : {1, 3}) {
    const GenRun on = generate(config(k, 0), greedy_params(), 1, dir);
    expect_same_tokens(off, on, "bigram MTP, k=" + std::to_string(k));
    // Seen: 32 of 81 drafts accepted at k = 1, 50 of 183 at k = 3 (chained drafts too).
    EXPECT_GT(on.metrics.value("spec_accepted_tokens", 0), 20) << "k=" << k;
  }
  // With logprobs, and a second round from the prefix cache (MTP rows included).
  const GenRun cached = generate(config(3, 0), greedy_params(true), 2, dir);
  expect_same_tokens(off, cached, "bigram MTP, k=3, second round from the prefix cache");
  EXPECT_GT(cached.metrics.value("prefix_cache_hits", 0), 0);
  const GenRun logprobs_off = generate(config(0, 0), greedy_params(true));
  double worst = 0;
  for (size_t i = 0; i < logprobs_off.outputs.size(); ++i)
    for (size_t t = 0; t < logprobs_off.outputs[i].outputs[0].logprobs.size(); ++t)
      worst = std::max(worst, std::abs(static_cast<double>(logprobs_off.outputs[i].outputs[0].logprobs[t] -
                                                           cached.outputs[i].outputs[0].logprobs[t])));
  std::printf("worst |logprob difference|: %.3g\n", worst);
  EXPECT_LT(worst, 1e-3);
}

}  // namespace
}  // namespace di::test
