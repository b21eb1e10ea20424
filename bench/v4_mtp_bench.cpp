// MTP speculative decoding on the CPU: the demo DeepSeek-V4 model (models/deepseek-v4-demo, with
// its trained MTP layer) generating greedily from the demo fixtures' prompts with drafts off,
// fixed k = 1 and k = 3, and the variable length; prints tokens per step, decode tok/s and the
// draft acceptance rate for each. The ceiling of a speculative row is drafts off in the same run.
//
//   bench_v4_mtp [THREADS] [NEW_TOKENS] [BATCH] [--append RESULTS.md COMMIT DEVICE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_command_line.h"
#include "engine/llm.h"

namespace {

using namespace di;

struct Row {
  std::string name;
  double tok_s = 0, tokens_per_step = 0, acceptance = 0;
  int64_t drafts = 0;
};

std::vector<int32_t> fixture_prompt(const std::string& name) {
  std::ifstream in(std::string(DI_SOURCE_DIR) + "/tests/fixtures/model_v4_demo/" + name + "/fixture.json");
  return nlohmann::json::parse(in).at("prompt_ids").get<std::vector<int32_t>>();
}

bool run(const std::string& name, int32_t k, int32_t variable, int threads, int64_t new_tokens,
         const std::vector<std::vector<int32_t>>& prompts, Row* row) {
  engine::EngineConfig c;
  c.max_model_len = 1024;
  c.max_num_seqs = static_cast<int32_t>(prompts.size());
  c.num_speculative_tokens = k;
  c.speculative_variable = variable;
  engine::ModelOptions o;
  o.num_threads = threads;
  auto llm = engine::LLM::load(std::string(DI_SOURCE_DIR) + "/models/deepseek-v4-demo", c, o);
  if (!llm.is_ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), llm.status().message().c_str());
    return false;
  }
  engine::SamplingParams p;
  p.temperature = 0;
  p.max_tokens = new_tokens;
  p.ignore_eos = true;
  // Prefill first (one token each), so the timed part is decode only.
  engine::SamplingParams one = p;
  one.max_tokens = 1;
  if (!(*llm)->generate(prompts, one).is_ok()) return false;
  const nlohmann::json before = nlohmann::json::parse((*llm)->engine().metrics_json());
  const auto t0 = std::chrono::steady_clock::now();
  auto out = (*llm)->generate(prompts, p);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.is_ok()) return false;
  const nlohmann::json m = nlohmann::json::parse((*llm)->engine().metrics_json());
  if (std::getenv("BENCH_PHASES")) std::fprintf(stderr, "%s: %s\n", name.c_str(), m["step_phases"].dump().c_str());
  const int64_t gen = m.value("generation_tokens", int64_t{0}) - before.value("generation_tokens", int64_t{0});
  const int64_t steps = m.value("steps", int64_t{0}) - before.value("steps", int64_t{0});
  row->name = name;
  // The timed run re-prefills the prompts' last partial block from the prefix cache: its steps
  // count too.
  row->tok_s = static_cast<double>(gen) / s;
  // Per sequence: a step of the batch advances each of its sequences by this many tokens.
  row->tokens_per_step =
      steps > 0 ? static_cast<double>(gen) / static_cast<double>(steps) / static_cast<double>(prompts.size()) : 0;
  row->drafts = m.value("spec_draft_tokens", int64_t{0}) - before.value("spec_draft_tokens", int64_t{0});
  const int64_t acc = m.value("spec_accepted_tokens", int64_t{0}) - before.value("spec_accepted_tokens", int64_t{0});
  row->acceptance = row->drafts > 0 ? static_cast<double>(acc) / static_cast<double>(row->drafts) : 0;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const auto cl = di::bench::parse_bench_command_line<3>(argc, argv, {2, 128, 1});
  const auto [threads, new_tokens, batch] = cl.numbers;
  const std::vector<std::string> names = {"demo_bible", "demo_chat", "demo_wordnet", "demo_long"};
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < batch; ++i) prompts.push_back(fixture_prompt(names[i % names.size()]));
  std::vector<Row> rows(4);
  if (!run("off", 0, 0, threads, new_tokens, prompts, &rows[0]) ||
      !run("fixed k=1", 1, 0, threads, new_tokens, prompts, &rows[1]) ||
      !run("fixed k=3", 3, 0, threads, new_tokens, prompts, &rows[2]) ||
      !run("variable (max 5)", 5, 1, threads, new_tokens, prompts, &rows[3]))
    return 1;
  std::printf("deepseek-v4-demo CPU, %d threads, batch %d, %lld new tokens each (greedy)\n", threads, batch,
              static_cast<long long>(new_tokens));
  for (const Row& r : rows)
    std::printf("  %-18s %7.2f tok/s  %5.2f tokens/step/seq  acceptance %.3f (%lld drafts)  %.2fx\n", r.name.c_str(),
                r.tok_s, r.tokens_per_step, r.acceptance, static_cast<long long>(r.drafts), r.tok_s / rows[0].tok_s);
  if (cl.results) {
    std::string lines;
    for (size_t i = 1; i < rows.size(); ++i) {
      char line[1024];
      std::snprintf(line, sizeof line,
                    "%s, %d threads | MTP speculative decoding, %s: deepseek-v4-demo greedy, batch %d, "
                    "%lld new tokens | %.2f tok/s, %.2f tokens/step/seq, acceptance %.3f | drafts off %.2f tok/s, %.2f "
                    "tokens/step/seq | %.0f%% | `bench_v4_mtp %d %lld %d` |\n",
                    cl.results->row_start().c_str(), threads, rows[i].name.c_str(), batch,
                    static_cast<long long>(new_tokens), rows[i].tok_s, rows[i].tokens_per_step, rows[i].acceptance,
                    rows[0].tok_s, rows[0].tokens_per_step, 100 * rows[i].tok_s / rows[0].tok_s, threads,
                    static_cast<long long>(new_tokens), batch);
      lines += line;
    }
    cl.results->append(lines);
  }
  return 0;
}
