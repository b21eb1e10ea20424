// Serving benchmark, after vLLM's benchmark_serving: against a running server (it starts
// nothing), streamed POST /v1/completions with random token-id prompts of a fixed length and a
// fixed output length (max_tokens + ignore_eos), at each concurrency level in turn. Per level:
// TTFT, inter-token latency and end-to-end latency percentiles, output tokens/s, and, scraped
// from the server's /metrics before and after the level, the engine's own step time split into
// its phases beside the model-only forward time measured in the same run (the ceiling).
//
// usage: bench_serving --port N --model NAME [--host H] [--api-key K] [--concurrency 1,8,64,256]
//          [--num-prompts 64] [--input-len 128] [--output-len 128] [--token-range 1000,30000]
//          [--temperature 0] [--seed 0] [--timeout 600] [--json FILE]
//          [--markdown FILE --commit C --device D]
// Exit status: 0 when every request succeeded with its full output, 1 otherwise, 2 on bad flags.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/serving_client.h"

namespace di::bench {
namespace {

using nlohmann::json;

struct Options {
  HttpTarget target;
  std::string api_key, model, json_path, markdown_path;
  std::string commit = "-", device = "-";  // for the markdown rows
  std::vector<int> concurrency = {1, 8, 64, 256};
  int num_prompts = 64, input_len = 128, output_len = 128;
  int token_lo = 1000, token_hi = 30000;
  double temperature = 0;
  uint64_t seed = 0;
};

struct RequestResult {
  bool ok = false;
  std::string error;
  double ttft = 0, e2e = 0;  // seconds
  std::vector<double> itl;   // gaps between token-bearing events
  int64_t prompt_tokens = -1, output_tokens = 0;
};

// numpy.percentile's default (linear between closest ranks), as benchmark_serving reports.
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

bool parse_int_list(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 100000) return false;
    out->push_back(static_cast<int>(v));
  }
  return !out->empty();
}

std::string usage() {
  return "usage: bench_serving --port N --model NAME [--host H] [--api-key K] [--concurrency 1,8,64,256]\n"
         "         [--num-prompts 64] [--input-len 128] [--output-len 128] [--token-range 1000,30000]\n"
         "         [--temperature 0] [--seed 0] [--timeout 600] [--json FILE] [--markdown FILE --commit C --device D]\n";
}

// Returns an error message, or "" when the flags are usable.
std::string parse_args(int argc, char** argv, Options* o) {
  auto integer = [](const std::string& flag, const std::string& v, int lo, int hi, int* out) -> std::string {
    char* end = nullptr;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || x < lo || x > hi)
      return flag + ": expected an integer " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" + v + "'";
    *out = static_cast<int>(x);
    return "";
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") return "help";
    if (i + 1 >= argc) return a + ": missing value";
    const std::string v = argv[++i];
    std::string e;
    if (a == "--host") o->target.host = v;
    else if (a == "--port") e = integer(a, v, 1, 65535, &o->target.port);
    else if (a == "--api-key") o->api_key = v;
    else if (a == "--model") o->model = v;
    else if (a == "--concurrency") {
      if (!parse_int_list(v, &o->concurrency)) e = a + ": expected positive integers separated by commas, got '" + v + "'";
    } else if (a == "--num-prompts") e = integer(a, v, 1, 1000000, &o->num_prompts);
    else if (a == "--input-len") e = integer(a, v, 1, 1000000, &o->input_len);
    else if (a == "--output-len") e = integer(a, v, 1, 1000000, &o->output_len);
    else if (a == "--timeout") e = integer(a, v, 1, 86400, &o->target.timeout_s);
    else if (a == "--seed") {
      int s = 0;
      e = integer(a, v, 0, INT32_MAX, &s);
      o->seed = static_cast<uint64_t>(s);
    } else if (a == "--temperature") {
      char* end = nullptr;
      o->temperature = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || o->temperature < 0 || o->temperature > 2)
        e = a + ": expected a number 0..2, got '" + v + "'";
    } else if (a == "--token-range") {
      std::vector<int> r;
      if (!parse_int_list(v, &r) || r.size() != 2 || r[0] >= r[1])
        e = a + ": expected LO,HI with 1 <= LO < HI, got '" + v + "'";
      else o->token_lo = r[0], o->token_hi = r[1];
    } else if (a == "--commit") o->commit = v;
    else if (a == "--device") o->device = v;
    else if (a == "--json") o->json_path = v;
    else if (a == "--markdown") o->markdown_path = v;
    else e = "unknown flag " + a;
    if (!e.empty()) return e;
  }
  if (o->target.port == 0) return "--port is required";
  if (o->model.empty()) return "--model is required";
  return "";
}

std::string request_body(const Options& o, int level, int index) {
  // Its own stream per (seed, level, request): prompts differ from each other and between levels,
  // so the prefix cache hits only by chance.
  std::seed_seq seq{static_cast<uint32_t>(o.seed), static_cast<uint32_t>(o.seed >> 32),
                    static_cast<uint32_t>(level), static_cast<uint32_t>(index)};
  std::mt19937_64 rng(seq);
  std::uniform_int_distribution<int> id(o.token_lo, o.token_hi - 1);
  json prompt = json::array();
  for (int i = 0; i < o.input_len; ++i) prompt.push_back(id(rng));
  json body = {{"model", o.model},
               {"prompt", prompt},
               {"max_tokens", o.output_len},
               {"ignore_eos", true},
               {"temperature", o.temperature},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  return body.dump();
}

RequestResult run_request(const Options& o, const std::string& body) {
  RequestResult r;
  const Clock::time_point start = Clock::now();
  Clock::time_point last;
  bool first = true, done = false;
  int64_t events_with_text = 0;
  auto on_event = [&](const std::string& data, Clock::time_point at) {
    if (data == "[DONE]") {
      done = true;
      return;
    }
    const json j = json::parse(data, nullptr, false);
    if (j.is_discarded()) {
      if (r.error.empty()) r.error = "an event that is not JSON: " + data.substr(0, 120);
      return;
    }
    if (j.contains("error")) {
      if (r.error.empty()) r.error = "error event: " + j["error"].dump().substr(0, 200);
      return;
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      r.output_tokens = j["usage"].value("completion_tokens", int64_t{0});
      r.prompt_tokens = j["usage"].value("prompt_tokens", int64_t{-1});
    }
    bool has_text = false;
    if (j.contains("choices") && j["choices"].is_array())
      for (const json& c : j["choices"])
        if (c.contains("text") && c["text"].is_string() && !c["text"].get<std::string>().empty()) has_text = true;
    if (!has_text) return;
    ++events_with_text;
    if (first) r.ttft = std::chrono::duration<double>(at - start).count();
    else r.itl.push_back(std::chrono::duration<double>(at - last).count());
    first = false;
    last = at;
  };
  HttpResult h = http_request(o.target, "POST", "/v1/completions", o.api_key, body, on_event);
  r.e2e = std::chrono::duration<double>(Clock::now() - start).count();
  if (!h.ok) r.error = h.error;
  else if (h.status != 200) r.error = "HTTP " + std::to_string(h.status) + ": " + h.body.substr(0, 300);
  else if (!done && r.error.empty()) r.error = "the stream ended without [DONE]";
  else if (r.error.empty() && events_with_text == 0) r.error = "no token arrived";
  else if (r.error.empty() && r.output_tokens != o.output_len)
    r.error = "expected " + std::to_string(o.output_len) + " output tokens (usage), got " + std::to_string(r.output_tokens);
  r.ok = r.error.empty();
  return r;
}

// The server's /metrics as name{labels} -> value; empty when it could not be read.
std::map<std::string, double> scrape(const Options& o) {
  std::map<std::string, double> m;
  HttpResult h = http_request(o.target, "GET", "/metrics", o.api_key, "");
  if (!h.ok || h.status != 200) return m;
  std::istringstream in(h.body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    m[line.substr(0, sp)] = std::strtod(line.c_str() + sp + 1, nullptr);
  }
  return m;
}

struct EngineDelta {
  bool available = false;
  double steps = 0, step_seconds = 0, busy_forward = 0, busy_wall = 0;
  std::map<std::string, double> phase_seconds;
};

const char* const kPhases[] = {"schedule", "prepare", "forward", "sample", "output"};

EngineDelta engine_delta(const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
  EngineDelta d;
  auto delta = [&](const std::string& k, double* out) {
    auto ia = a.find(k), ib = b.find(k);
    if (ib == b.end()) return false;
    *out = ib->second - (ia == a.end() ? 0.0 : ia->second);
    return true;
  };
  d.available = delta("deepinfer_step_time_seconds_count", &d.steps) &&
                delta("deepinfer_step_time_seconds_sum", &d.step_seconds) &&
                delta("deepinfer_busy_forward_seconds_total", &d.busy_forward) &&
                delta("deepinfer_busy_wall_seconds_total", &d.busy_wall);
  for (const char* p : kPhases) {
    double s = 0;
    d.available = delta(std::string("deepinfer_step_phase_seconds_total{phase=\"") + p + "\"}", &s) && d.available;
    d.phase_seconds[p] = s;
  }
  return d;
}

struct LevelReport {
  int concurrency = 0, requests = 0, ok = 0, failed = 0;
  std::string first_error;
  double duration = 0;
  int64_t output_tokens = 0, min_output = 0, max_output = 0, min_prompt = 0, max_prompt = 0;
  std::vector<double> ttft, itl, e2e;  // ms
  EngineDelta engine;
};

LevelReport run_level(const Options& o, int level_index, int concurrency) {
  LevelReport rep;
  rep.concurrency = concurrency;
  rep.requests = o.num_prompts;
  std::vector<std::string> bodies;
  for (int i = 0; i < o.num_prompts; ++i) bodies.push_back(request_body(o, level_index, i));
  std::vector<RequestResult> results(static_cast<size_t>(o.num_prompts));
  const auto before = scrape(o);
  std::atomic<int> next{0};
  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < std::min(concurrency, o.num_prompts); ++w)
    workers.emplace_back([&] {
      for (int i; (i = next.fetch_add(1)) < o.num_prompts;) results[static_cast<size_t>(i)] = run_request(o, bodies[static_cast<size_t>(i)]);
    });
  for (auto& t : workers) t.join();
  rep.duration = std::chrono::duration<double>(Clock::now() - t0).count();
  rep.engine = engine_delta(before, scrape(o));
  bool first = true;
  for (const RequestResult& r : results) {
    if (!r.ok) {
      ++rep.failed;
      if (rep.first_error.empty()) rep.first_error = r.error;
      continue;
    }
    ++rep.ok;
    rep.output_tokens += r.output_tokens;
    rep.min_output = first ? r.output_tokens : std::min(rep.min_output, r.output_tokens);
    rep.max_output = first ? r.output_tokens : std::max(rep.max_output, r.output_tokens);
    rep.min_prompt = first ? r.prompt_tokens : std::min(rep.min_prompt, r.prompt_tokens);
    rep.max_prompt = first ? r.prompt_tokens : std::max(rep.max_prompt, r.prompt_tokens);
    first = false;
    rep.ttft.push_back(r.ttft * 1e3);
    rep.e2e.push_back(r.e2e * 1e3);
    for (double g : r.itl) rep.itl.push_back(g * 1e3);
  }
  return rep;
}

json level_json(const Options& o, const LevelReport& r) {
  auto pct = [](const std::vector<double>& v) {
    return json{{"p50", percentile(v, 50)}, {"p90", percentile(v, 90)}, {"p99", percentile(v, 99)}};
  };
  json j = {{"concurrency", r.concurrency},
            {"requests", r.requests},
            {"ok", r.ok},
            {"failed", r.failed},
            {"input_len", o.input_len},
            {"output_len", o.output_len},
            {"prompt_tokens_min", r.min_prompt},
            {"prompt_tokens_max", r.max_prompt},
            {"output_tokens", r.output_tokens},
            {"output_tokens_min", r.min_output},
            {"output_tokens_max", r.max_output},
            {"duration_s", r.duration},
            {"output_tok_per_s", r.duration > 0 ? static_cast<double>(r.output_tokens) / r.duration : 0.0},
            {"req_per_s", r.duration > 0 ? r.ok / r.duration : 0.0},
            {"ttft_ms", pct(r.ttft)},
            {"itl_ms", pct(r.itl)},
            {"e2e_ms", pct(r.e2e)}};
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  const EngineDelta& e = r.engine;
  if (e.available && e.steps > 0) {
    json phases = json::object();
    for (const char* p : kPhases) phases[p] = e.phase_seconds.at(p) / e.steps * 1e3;
    const double forward = e.phase_seconds.at("forward") / e.steps * 1e3;
    const double step = e.step_seconds / e.steps * 1e3;
    j["engine"] = {{"steps", e.steps},
                   {"step_mean_ms", step},
                   {"forward_mean_ms", forward},
                   {"phase_mean_ms", phases},
                   {"step_over_forward", forward > 0 ? step / forward : 0.0},
                   {"busy_share", e.busy_wall > 0 ? e.busy_forward / e.busy_wall : 0.0}};
  }
  return j;
}

void print_level(const json& j) {
  auto pct = [&](const char* k) {
    char b[128];
    std::snprintf(b, sizeof b, "p50 %9.2f  p90 %9.2f  p99 %9.2f", j[k]["p50"].get<double>(), j[k]["p90"].get<double>(),
                  j[k]["p99"].get<double>());
    return std::string(b);
  };
  std::printf("== concurrency %d: %d requests (%d ok, %d failed), prompt %d / output %d tokens\n",
              j["concurrency"].get<int>(), j["requests"].get<int>(), j["ok"].get<int>(), j["failed"].get<int>(),
              j["input_len"].get<int>(), j["output_len"].get<int>());
  if (j.contains("first_error")) std::printf("   first error: %s\n", j["first_error"].get<std::string>().c_str());
  std::printf("   duration %.2f s, output %.1f tok/s, %.2f req/s\n", j["duration_s"].get<double>(),
              j["output_tok_per_s"].get<double>(), j["req_per_s"].get<double>());
  std::printf("   TTFT ms  %s\n   ITL ms   %s\n   E2E ms   %s\n", pct("ttft_ms").c_str(), pct("itl_ms").c_str(),
              pct("e2e_ms").c_str());
  if (!j.contains("engine")) {
    std::printf("   engine: the server's /metrics has no step breakdown\n");
    return;
  }
  const json& e = j["engine"];
  std::printf("   engine: %.0f steps, step mean %.3f ms = schedule %.3f + prepare %.3f + forward %.3f + sample %.3f + output %.3f\n",
              e["steps"].get<double>(), e["step_mean_ms"].get<double>(), e["phase_mean_ms"]["schedule"].get<double>(),
              e["phase_mean_ms"]["prepare"].get<double>(), e["phase_mean_ms"]["forward"].get<double>(),
              e["phase_mean_ms"]["sample"].get<double>(), e["phase_mean_ms"]["output"].get<double>());
  std::printf("   model-only forward mean %.3f ms; engine step / forward %.3f; busy (forward / wall) %.1f %%\n",
              e["forward_mean_ms"].get<double>(), e["step_over_forward"].get<double>(),
              100.0 * e["busy_share"].get<double>());
}

// Rows in bench/RESULTS.md's columns (date, commit, device, what, measured, ceiling, ratio,
// notes), one per level; the ceiling is the model-only forward time of the same run.
std::string markdown_rows(const Options& o, const std::vector<json>& levels) {
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
  std::ostringstream m;
  for (const json& j : levels) {
    auto p3 = [&](const char* k) {
      char s[96];
      std::snprintf(s, sizeof s, "%.2f/%.2f/%.2f", j[k]["p50"].get<double>(), j[k]["p90"].get<double>(),
                    j[k]["p99"].get<double>());
      return std::string(s);
    };
    char b[1024];
    std::snprintf(b, sizeof b,
                  "| %s | %s | %s | bench_serving, %s: streamed /v1/completions over loopback, concurrency %d, %d requests, "
                  "prompt %d random ids, %d output tokens (ignore_eos), temperature %g | %.1f output tok/s (%d/%d ok); "
                  "TTFT p50/p90/p99 %s ms; ITL %s ms; E2E %s ms ",
                  date, o.commit.c_str(), o.device.c_str(), o.model.c_str(), j["concurrency"].get<int>(),
                  j["requests"].get<int>(), o.input_len, o.output_len, o.temperature, j["output_tok_per_s"].get<double>(),
                  j["ok"].get<int>(), j["requests"].get<int>(), p3("ttft_ms").c_str(), p3("itl_ms").c_str(),
                  p3("e2e_ms").c_str());
    m << b;
    if (j.contains("engine")) {
      const json& e = j["engine"];
      const json& ph = e["phase_mean_ms"];
      std::snprintf(b, sizeof b,
                    "| model-only forward %.3f ms/step (same run) | engine step %.3f ms = %.3fx forward; busy %.1f%% "
                    "| %.0f steps; step phases ms: schedule %.3f, prepare %.3f, forward %.3f, sample %.3f, output %.3f |\n",
                    e["forward_mean_ms"].get<double>(), e["step_mean_ms"].get<double>(),
                    e["step_over_forward"].get<double>(), 100.0 * e["busy_share"].get<double>(), e["steps"].get<double>(),
                    ph["schedule"].get<double>(), ph["prepare"].get<double>(), ph["forward"].get<double>(),
                    ph["sample"].get<double>(), ph["output"].get<double>());
      m << b;
    } else {
      m << "| n/a (no step breakdown in /metrics) | n/a | |\n";
    }
  }
  return m.str();
}

int run(int argc, char** argv) {
  Options o;
  const std::string err = parse_args(argc, argv, &o);
  if (err == "help") {
    std::cout << usage();
    return 0;
  }
  if (!err.empty()) {
    std::cerr << "bench_serving: " << err << "\n" << usage();
    return 2;
  }
  std::vector<json> levels;
  bool all_ok = true;
  for (size_t i = 0; i < o.concurrency.size(); ++i) {
    const LevelReport r = run_level(o, static_cast<int>(i), o.concurrency[i]);
    json j = level_json(o, r);
    print_level(j);
    std::fflush(stdout);
    all_ok = all_ok && r.failed == 0;
    if (!o.json_path.empty()) {
      std::ofstream f(o.json_path, std::ios::app);
      f << j.dump() << "\n";
      if (!f) {
        std::cerr << "bench_serving: cannot write " << o.json_path << "\n";
        return 1;
      }
    }
    levels.push_back(std::move(j));
  }
  if (!o.markdown_path.empty()) {
    std::ofstream f(o.markdown_path, std::ios::app);
    f << markdown_rows(o, levels);
    if (!f) {
      std::cerr << "bench_serving: cannot write " << o.markdown_path << "\n";
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace di::bench

int main(int argc, char** argv) { return di::bench::run(argc, argv); }
