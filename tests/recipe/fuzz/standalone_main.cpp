// A libFuzzer-compatible driver for builds without libFuzzer (the default gcc build and CI):
// runs LLVMFuzzerTestOneInput on the seed files, then on random mutations of them (byte flips,
// inserts, deletes, splices, JSON-ish tokens) until the time budget is spent. A crash or hang
// fails the test; under DI_SANITIZE=address it also catches leaks. The coverage-guided run is
// run_libfuzzer.sh.
// usage: <fuzz_smoke> SECONDS SEED_FILE... (shared by the recipe's request and output targets)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SECONDS SEED_FILE...\n", argv[0]);
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  std::vector<std::string> seeds;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    seeds.push_back(ss.str());
  }
  auto run = [](const std::string& s) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  for (const auto& s : seeds) run(s);
  static const char* kTokens[] = {"{", "}", "[", "]", ",", ":", "\"", "null", "true", "0", "-1",
                                  "1e309", "\"\\ud800\"", "\"role\"", "\"tool\"", "\"content\"",
                                  "\"tool_calls\"", "\"type\"", "\"image_url\"", "\xff", "\\"};
  std::mt19937_64 rng(12345);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  size_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    std::string s = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t pos = 1 + rng() % s.size();  // byte 0 selects protocol/encoding: keep most runs on-seed
      if (pos > s.size()) pos = s.size();
      switch (rng() % 6) {
        case 0: if (pos < s.size()) s[pos] = static_cast<char>(rng()); break;
        case 1: s.erase(pos, 1 + rng() % 16); break;
        case 2: s.insert(pos, kTokens[rng() % (sizeof kTokens / sizeof *kTokens)]); break;
        case 3: {
          const std::string& o = seeds[rng() % seeds.size()];
          size_t a = rng() % o.size(), n = rng() % 64;
          s.insert(pos, o.substr(a, n));
          break;
        }
        case 4: s[0] = static_cast<char>(rng()); break;
        default: s.insert(pos, std::string(1 + rng() % 4, "[{\"x"[rng() % 4])); break;
      }
    }
    run(s);
    ++runs;
  }
  std::printf("%s: %zu mutated inputs in %.0f s, no crash\n", argv[0], runs, seconds);
  return 0;
}
