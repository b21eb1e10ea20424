// The command line the CPU benchmarks share: a few positional numbers, each with its default,
// then an optional `--append RESULTS.md COMMIT DEVICE` saying where the measured row goes and
// what its first columns are. Knows nothing of what a benchmark measures or how it words a row.
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>

namespace di::bench {

// bench/RESULTS.md (or another file in its columns) and the commit and device a row is for.
struct ResultsFile {
  std::string path, commit, device;

  // "| 2026-12-03 | a1b2c3d | H200": the date (today, UTC), commit and device columns that open
  // every row; the benchmark writes the rest.
  std::string row_start() const {
    char date[16];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    return "| " + std::string(date) + " | " + commit + " | " + device;
  }

  void append(const std::string& rows) const { std::ofstream(path, std::ios::app) << rows; }
};

template <size_t N>
struct BenchCommandLine {
  std::array<int, N> numbers;          // argv[1..N], each its default where absent
  std::optional<ResultsFile> results;  // from `--append FILE COMMIT DEVICE` right after them
};

// `bench [N numbers] [--append FILE COMMIT DEVICE]`; `--append` counts only with all three words.
template <size_t N>
BenchCommandLine<N> parse_bench_command_line(int argc, char** argv, const std::array<int, N>& defaults) {
  BenchCommandLine<N> cl{defaults, std::nullopt};
  for (size_t i = 0; i < N && static_cast<int>(i) + 1 < argc; ++i) cl.numbers[i] = std::atoi(argv[i + 1]);
  const int at = static_cast<int>(N) + 1;
  if (argc > at + 3 && std::string(argv[at]) == "--append")
    cl.results = ResultsFile{argv[at + 1], argv[at + 2], argv[at + 3]};
  return cl;
}

}  // namespace di::bench
