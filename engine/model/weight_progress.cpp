// WeightProgress and LoadProgress: see weight_progress.h.
#include "engine/model/weight_progress.h"

#include <chrono>

#include "base/log.h"

namespace di::engine {
namespace {

thread_local WeightProgress* t_current = nullptr;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

WeightProgress* current_weight_progress() { return t_current; }

ScopedWeightProgress::ScopedWeightProgress(WeightProgress* p) : previous_(t_current) { t_current = p; }
ScopedWeightProgress::~ScopedWeightProgress() { t_current = previous_; }

LoadProgress::LoadProgress(int64_t total_bytes, std::function<double()> clock, std::optional<bool> bar,
                           log::ProgressConfig config)
    : clock_(clock ? std::move(clock) : std::function<double()>(steady_seconds)) {
  const bool use_bar = bar.has_value() ? *bar : log::progress_bar_available();
  meter_ = std::make_unique<log::ProgressMeter>("weights", total_bytes, use_bar, clock_(), config);
}

LoadProgress::~LoadProgress() { finish(); }

void LoadProgress::advance(int64_t bytes) {
  if (finished_ || bytes <= 0) return;
  done_ += bytes;
  emit(meter_->update(done_, clock_()));
}

void LoadProgress::finish() {
  if (finished_) return;
  finished_ = true;
  emit(meter_->finish(clock_()));
  if (meter_->shown()) log::end_progress_bar();
}

void LoadProgress::emit(const std::optional<log::ProgressOutput>& out) {
  if (!out) return;
  if (out->kind == log::ProgressOutput::kBar) {
    log::write_progress_bar(out->text);
  } else {
    log::info("%s", out->text.c_str());
  }
}

}  // namespace di::engine
