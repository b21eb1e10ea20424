// bench_tokenizer: single-thread encode speed of the tokenizer on a JSON Lines text file
// (one {"text": ...} document per line). Prints {"mb_per_s": median of --repeat runs, ...}.
// Time is the thread's CPU time, so a busy shared machine slows the numbers less; the first
// run warms the per-thread word cache and is not counted.
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/tokenizer/tokenizer.h"

static double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  std::string dir, file;
  int repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--tokenizer")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--text")) file = argv[i + 1];
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
  }
  if (dir.empty() || file.empty()) {
    std::fprintf(stderr, "usage: bench_tokenizer --tokenizer DIR --text FILE.jsonl [--repeat N]\n");
    return 2;
  }
  auto tok = di::recipe::Tokenizer::load(dir);
  if (!tok.is_ok()) {
    std::fprintf(stderr, "%s\n", tok.status().message().c_str());
    return 1;
  }
  std::vector<std::string> docs;
  size_t bytes = 0;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    docs.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
    bytes += docs.back().size();
  }
  std::vector<double> seconds;
  size_t ids = 0;
  std::vector<int32_t> out;
  for (int r = 0; r <= repeat; ++r) {
    ids = 0;
    const double t0 = cpu_seconds();
    for (const std::string& d : docs) {
      out.clear();
      if (!(*tok)->encode_into(d, true, out).is_ok()) return 1;
      ids += out.size();
    }
    const double s = cpu_seconds() - t0;
    if (r > 0) seconds.push_back(s);
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf("{\"mb_per_s\": %.2f, \"bytes\": %zu, \"seconds\": %.4f, \"ids\": %zu}\n",
              bytes / 1e6 / median, bytes, median, ids);
  return 0;
}
