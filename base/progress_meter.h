// ProgressMeter: when and what to print for a long byte-counted phase (weights loading), kept
// free of clocks and streams so its throttling is testable with made-up times. Two forms, as
// vLLM's and Hugging Face's loaders show them: on a terminal one bar rewritten in place; in a
// log (a file, a pipe, an embedder's handler) a plain record now and then. Nothing at all for a
// phase that ends within the grace period, so quick loads stay quiet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace di::log {

struct ProgressConfig {
  double grace_s = 2.0;         // nothing is shown before this much time has passed
  double bar_interval_s = 0.1;  // the terminal bar is redrawn at most this often
  double line_interval_s = 5.0; // log records at most this often
};

// One thing to print: a bar (replaces the terminal line, no newline) or a log record.
struct ProgressOutput {
  enum Kind { kBar, kRecord } kind;
  std::string text;
};

class ProgressMeter {
 public:
  // `label` starts every line ("weights"); `total` bytes (0: unknown, no percentage or ETA);
  // `bar`: the terminal form; `start_s`: the phase's start on the caller's clock.
  ProgressMeter(std::string label, int64_t total, bool bar, double start_s, ProgressConfig config = {});

  // `done` bytes so far at time `now_s`: what to print now, if anything.
  std::optional<ProgressOutput> update(int64_t done, double now_s);
  // The phase ended at `now_s`: a last full bar when a bar was shown (the caller ends the line),
  // else nothing (the phase's own "loaded in" record follows).
  std::optional<ProgressOutput> finish(double now_s);
  bool shown() const { return shown_; }

  // The text of one line, for any form: "weights: 42% 1.20 GiB / 2.86 GiB, 0.60 GiB/s, ETA 3 s".
  static std::string format(const std::string& label, int64_t done, int64_t total, double elapsed_s, bool bar);

 private:
  std::string label_;
  int64_t total_;
  bool bar_;
  double start_s_;
  ProgressConfig config_;
  bool shown_ = false;
  double last_s_ = 0;
  int64_t done_ = 0;
};

}  // namespace di::log
