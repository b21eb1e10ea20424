// Constraint benchmark: compile time per JSONSchemaBench schema and per-token mask time over the
// DeepSeek-V3 vocabulary (128k tokens), walking each schema's valid instances token by token.
// The ceiling it is compared with, measured in the same run: the naive mask (every token checked
// on its own against the matcher). Appends a row to bench/RESULTS.md with --record.
//   constrain_bench [--dir DIR] [--record] [--limit N]   (run from a Release/RelWithDebInfo build)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/constrain/json_schema_compiler.h"
#include "engine/constrain/matcher.h"
#include "tests/constrain/json_instance.h"
#include "tests/constrain/test_util.h"
#include "tests/constrain/test_vocab.h"

using namespace di::engine::constrain;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

std::vector<uint32_t> greedy_tokens(const std::unordered_map<std::string, uint32_t>& by, const std::string& text) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    size_t n = std::min<size_t>(32, text.size() - i);
    for (; n > 0; --n) {
      auto it = by.find(text.substr(i, n));
      if (it != by.end()) {
        out.push_back(it->second);
        break;
      }
    }
    if (n == 0) return {};
    i += n;
  }
  return out;
}

std::string git_commit() {
  FILE* p = popen("git -C " DI_SOURCE_DIR " rev-parse --short HEAD 2>/dev/null", "r");
  char buf[64] = {0};
  if (p) {
    if (!fgets(buf, sizeof buf, p)) buf[0] = 0;
    pclose(p);
  }
  std::string s = buf;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "unknown" : s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = std::string(DI_FIXTURES_DIR) + "/constrain/jsonschemabench";
  bool record = false;
  size_t limit = SIZE_MAX;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    else if (!std::strcmp(argv[i], "--record")) record = true;
    else if (!std::strcmp(argv[i], "--limit") && i + 1 < argc) limit = std::stoul(argv[++i]);
  }
  std::string err;
  auto vocab = di::engine::constrain::testing::deepseek_vocab(&err);
  if (!vocab) {
    std::fprintf(stderr, "constrain_bench: %s\n", err.c_str());
    return 1;
  }
  std::unordered_map<std::string, uint32_t> by;
  for (uint32_t id = 0; id < vocab->size(); ++id) {
    if (!vocab->is_special(id) && !vocab->token(id).empty()) by.emplace(vocab->token(id), id);
  }
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.size() > limit) files.resize(limit);

  std::vector<double> compile_us, mask_cold_us, mask_warm_us, naive_us;
  size_t compiled = 0, refused = 0, tokens = 0;
  std::vector<uint32_t> mask(vocab->mask_words());
  for (const auto& f : files) {
    auto doc = nlohmann::ordered_json::parse(di::engine::constrain::testing::read_file(f.string()), nullptr, false);
    if (doc.is_discarded() || !doc.contains("schema")) continue;
    auto t0 = Clock::now();
    auto g = compile_json_schema(doc["schema"]);
    double c_us = us_since(t0);
    if (!g.is_ok()) {
      ++refused;
      continue;
    }
    ++compiled;
    compile_us.push_back(c_us);
    auto cg = std::make_shared<CompiledGrammar>(*g, vocab);
    di::engine::constrain::testing::InstanceWriter writer(doc["schema"]);
    for (const auto& t : doc["tests"]) {
      if (!t["valid"].get<bool>()) continue;
      std::vector<uint32_t> toks = greedy_tokens(by, writer.write(t["data"], 2));
      for (int pass = 0; pass < 2; ++pass) {
        Matcher m(cg);
        bool ok = true;
        for (size_t i = 0; i < toks.size() && ok; ++i) {
          auto t1 = Clock::now();
          m.fill_mask(mask.data());
          (pass == 0 ? mask_cold_us : mask_warm_us).push_back(us_since(t1));
          if (pass == 1 && naive_us.size() < 30 && i % 11 == 0) {
            // The naive mask: every token's bytes checked against the current state.
            auto t2 = Clock::now();
            uint32_t n = 0;
            for (uint32_t id = 0; id < vocab->size(); ++id) n += !vocab->is_special(id) && m.can_accept_bytes(vocab->token(id));
            naive_us.push_back(us_since(t2));
            if (n == 0) std::fprintf(stderr, "naive mask empty at %s\n", f.filename().c_str());
          }
          ok = m.accept_token(toks[i]).is_ok();
          tokens += pass == 0;
        }
        if (!ok) break;  // an instance our grammar does not accept (a known departure)
      }
    }
  }
  const double mask_p50 = pct(mask_warm_us, 0.5), mask_p99 = pct(mask_warm_us, 0.99);
  const double cold_p50 = pct(mask_cold_us, 0.5), cold_p99 = pct(mask_cold_us, 0.99), cold_max = pct(mask_cold_us, 1.0);
  const double naive_p50 = pct(naive_us, 0.5);
  const double comp_p50 = pct(compile_us, 0.5), comp_p90 = pct(compile_us, 0.9), comp_max = pct(compile_us, 1.0);
  std::printf("schemas: %zu files, %zu compiled (%.1f%%), %zu refused\n", files.size(), compiled,
              100.0 * double(compiled) / double(std::max<size_t>(1, files.size())), refused);
  std::printf("compile: p50 %.0f us, p90 %.0f us, max %.0f us\n", comp_p50, comp_p90, comp_max);
  std::printf("mask (vocab %u, %zu tokens): first visit p50 %.1f us, p99 %.0f us, max %.0f us\n", vocab->size(), tokens,
              cold_p50, cold_p99, cold_max);
  std::printf("mask warm: p50 %.1f us, p99 %.1f us\n", mask_p50, mask_p99);
  std::printf("ceiling (naive per-token check, same run, %zu samples): p50 %.0f us -> warm mask is %.0fx faster\n",
              naive_us.size(), naive_p50, naive_p50 / std::max(mask_p50, 0.001));
  if (record) {
    std::ofstream out(std::string(DI_SOURCE_DIR) + "/bench/RESULTS.md", std::ios::app);
    char row[512];
    std::time_t now = std::time(nullptr);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::snprintf(row, sizeof row,
                  "| %s | %s | CPU 1 thread | constrain: JSONSchemaBench %zu schemas (%zu compiled), DeepSeek-V3 vocab %u | "
                  "mask p50 %.1f us / p99 %.0f us (first visit p50 %.0f / p99 %.0f us); compile p50 %.0f us / p90 %.0f us | "
                  "naive per-token mask p50 %.0f us | %.0fx | |\n",
                  date, git_commit().c_str(), files.size(), compiled, vocab->size(), mask_p50, mask_p99, cold_p50,
                  cold_p99, comp_p50, comp_p90, naive_p50, naive_p50 / std::max(mask_p50, 0.001));
    out << row;
  }
  return 0;
}
