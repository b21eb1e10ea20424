// ProgressMeter: see progress_meter.h.
#include "base/progress_meter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/log.h"

namespace di::log {
namespace {

constexpr int kBarWidth = 30;

std::string eta_text(double seconds) {
  char buf[32];
  const long long s = static_cast<long long>(std::ceil(seconds));
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s / 60) % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", s);
  }
  return buf;
}

}  // namespace

ProgressMeter::ProgressMeter(std::string label, int64_t total, bool bar, double start_s, ProgressConfig config)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 0)), bar_(bar), start_s_(start_s), config_(config) {}

std::string ProgressMeter::format(const std::string& label, int64_t done, int64_t total, double elapsed_s, bool bar) {
  std::string out = label + ": ";
  const bool known = total > 0;
  const double frac = known ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0) : 0.0;
  if (known) {
    if (bar) {
      const int filled = static_cast<int>(frac * kBarWidth);
      out += '[';
      out.append(static_cast<size_t>(filled), '#');
      out.append(static_cast<size_t>(kBarWidth - filled), '.');
      out += "] ";
    }
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3d%% ", static_cast<int>(frac * 100));
    out += pct;
    out += format_bytes(static_cast<double>(done)) + " / " + format_bytes(static_cast<double>(total));
  } else {
    out += format_bytes(static_cast<double>(done));
  }
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  out += ", " + format_bytes(rate) + "/s";
  if (known && rate > 0 && done < total) out += ", ETA " + eta_text(static_cast<double>(total - done) / rate);
  return out;
}

std::optional<ProgressOutput> ProgressMeter::update(int64_t done, double now_s) {
  done_ = std::max(done_, done);
  const double elapsed = now_s - start_s_;
  if (elapsed < config_.grace_s) return std::nullopt;
  const double interval = bar_ ? config_.bar_interval_s : config_.line_interval_s;
  if (shown_ && now_s - last_s_ < interval) return std::nullopt;
  shown_ = true;
  last_s_ = now_s;
  return ProgressOutput{bar_ ? ProgressOutput::kBar : ProgressOutput::kRecord, format(label_, done_, total_, elapsed, bar_)};
}

std::optional<ProgressOutput> ProgressMeter::finish(double now_s) {
  if (!bar_ || !shown_) return std::nullopt;
  const int64_t done = total_ > 0 ? total_ : done_;
  return ProgressOutput{ProgressOutput::kBar, format(label_, done, total_, now_s - start_s_, true)};
}

}  // namespace di::log
