// bench_gpu_constrain: what structured output adds to a GPU decode step. A Llama-3-8B-shaped model
// (random bf16 weights; the DeepSeek-V3 vocabulary's 129,280 logits so the masks are real) decodes
// a batch of 32, every step alternately without constraints and with a JSON Schema on every
// sequence (masks filled on the host while the forward runs, applied to the device logits).
// Prints both median step times and the added time in percent; with --append FILE COMMIT DEVICE
// appends a row to bench/RESULTS.md.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_bench_util.h"
#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/matcher_constraint.h"
#include "engine/model/cuda/device_cache.h"
#include "engine/model/llama/llama_cuda_model.h"
#include "tests/constrain/test_vocab.h"

namespace kc = di::kernels::cuda;
namespace cs = di::engine::constrain;
using namespace di::engine;

using di::bench::median;
using di::bench::now_ms;

namespace {

// A tool-call-like record: nested object, enum, bounded strings and numbers, a bounded array.
const char* kSchema = R"({"type": "object", "properties": {
  "name": {"type": "string", "minLength": 1, "maxLength": 24},
  "city": {"enum": ["Paris", "Berlin", "Tokyo", "Lima"]},
  "age": {"type": "integer", "minimum": 0, "maximum": 120},
  "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
  "address": {"type": "object", "properties": {"street": {"type": "string", "maxLength": 16},
              "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["street", "zip"],
              "additionalProperties": false},
  "active": {"type": "boolean"}},
  "required": ["name", "city", "age", "tags", "address", "active"], "additionalProperties": false})";

// One MatcherConstraint per sequence; fill() is what the model calls while its forward runs.
class BatchMasks final : public LogitsMaskSource {
 public:
  std::vector<std::unique_ptr<TokenConstraint>> seqs;
  double fill_ms = 0;
  void fill(uint32_t* words, int64_t words_per_row, uint8_t* masked) override {
    const double t0 = now_ms();
    for (size_t s = 0; s < seqs.size(); ++s) {
      seqs[s]->fill_mask(words + static_cast<int64_t>(s) * words_per_row, words_per_row);
      masked[s] = 1;
    }
    fill_ms = now_ms() - t0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const di::bench::BenchArgs args = di::bench::parse_bench_args(argc, argv);

  std::string err;
  auto vocab = cs::testing::deepseek_vocab(&err);
  if (!vocab) {
    std::printf("bench_gpu_constrain: skipped, no vocabulary (%s)\n", err.c_str());
    return 0;
  }
  constexpr int64_t kLogits = 129280;  // DeepSeek-V3's embedding rows (the tokenizer uses fewer)
  // Llama-3-8B's layers with DeepSeek-V3's embedding width (its tokenizer spells the masks).
  const llama::LlamaConfig cfg = di::bench::llama3_8b_shape(kLogits);
  ModelOptions opts;
  opts.device = "cuda";
  auto made = llama::LlamaCudaModel::random(cfg, kc::DType::kBF16, 1234, opts);
  CHECK(made.status());
  llama::LlamaCudaModel& model = **made;

  cs::GrammarCompiler compiler(vocab);
  cs::ConstraintSpec spec;
  spec.source = kSchema;
  spec.json.whitespace = cs::JsonWhitespace::kCompact;
  const double c0 = now_ms();
  CHECK(compiler.compile(spec).status());
  const double compile_ms = now_ms() - c0;

  const int B = 32, ctx = 512, warm = 24, steps = 60;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(vocab->size() - 1));
  std::vector<float> logits;
  auto random_prompt = [&](int) {
    std::vector<int32_t> p(static_cast<size_t>(ctx));
    for (int32_t& x : p) x = tok(rng);
    return p;
  };
  di::bench::DecodeBatch d = di::bench::prefill_sequences(model, B, ctx + warm + 2 * steps + 2, random_prompt, logits);
  std::vector<std::vector<int32_t>>& ids = d.ids;
  BatchMasks masks;
  for (int b = 0; b < B; ++b) {
    auto m = cs::make_token_constraint(compiler, spec);
    CHECK(m.status());
    masks.seqs.push_back(std::move(m).value());
  }

  // Greedy over the masked row: advances each matcher along a path the grammar allows; a finished
  // document starts over so every step masks.
  int64_t documents = 0;
  auto advance = [&](int b, const float* row) {
    const int32_t t = static_cast<int32_t>(std::max_element(row, row + kLogits) - row);
    if (!masks.seqs[b]->accept_token(t)) {
      std::fprintf(stderr, "sequence %d: the constraint refused its own masked argmax %d\n", b, t);
      std::exit(1);
    }
    if (masks.seqs[b]->is_terminated() || vocab->is_eos(static_cast<uint32_t>(t))) {
      masks.seqs[b] = std::move(cs::make_token_constraint(compiler, spec)).value();
      ++documents;
    }
    return t;
  };
  std::vector<double> plain, masked, fills;
  for (int s = 0; s < warm + 2 * steps; ++s) {
    const bool constrained = s < warm || s % 2 == 1;
    ForwardBatch step = d.last_tokens();
    if (constrained) step.masks = &masks;
    const double t0 = now_ms();
    CHECK(model.forward(step, logits));
    const double ms = now_ms() - t0;
    for (int b = 0; b < B; ++b)
      ids[b].push_back(constrained ? advance(b, logits.data() + static_cast<int64_t>(b) * kLogits) : tok(rng));
    if (s < warm) continue;
    (constrained ? masked : plain).push_back(ms);
    if (constrained) fills.push_back(masks.fill_ms);
  }
  const double p = median(plain), m = median(masked), f = median(fills);
  const double added = 100.0 * (m - p) / p;
  std::printf("schema compile %.1f ms; %lld documents completed\n", compile_ms, static_cast<long long>(documents));
  std::printf("decode B=%d ctx=%d: plain %.3f ms/step, JSON Schema on every sequence %.3f ms/step: added %+.2f%%\n", B,
              ctx, p, m, added);
  std::printf("host mask fill %.3f ms/step (%.1f us per sequence), overlapped with the forward\n", f, 1e3 * f / B);

  char what[200], meas[200], ceil[160], ratio[32], notes[300];
  std::snprintf(what, sizeof what,
                "constrained decode: llama-3-8B shape bf16 (129,280 logits), batch %d, ctx %d, JSON Schema on every sequence", B, ctx);
  std::snprintf(meas, sizeof meas, "%.3f ms/step, added %+.2f%%", m, added);
  std::snprintf(ceil, sizeof ceil, "unconstrained %.3f ms/step, same run", p);
  std::snprintf(ratio, sizeof ratio, "%.3fx", m / p);
  std::snprintf(notes, sizeof notes,
                "median of %d steps each, interleaved; host mask fill %.2f ms/step (DeepSeek-V3 vocab, %.1f us/seq) overlapped with the forward; goal <= 1%% — `bench_gpu_constrain`",
                steps, f, 1e3 * f / B);
  di::bench::append_rows(args, {{what, meas, ceil, ratio, notes}});
  return 0;
}
