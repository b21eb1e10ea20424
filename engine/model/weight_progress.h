// The progress of a model's weights while they load: WeightLoader reports the checkpoint bytes of
// every tensor a family takes (and so reads, converts or uploads) to the load running on its
// thread, and LoadProgress turns the count into the terminal bar or log records
// (base/progress_meter.h). The CUDA backend is its own library with its own copy of this code,
// so the core hands it the LoadProgress through ModelOptions::weight_progress (a virtual call
// lands back in the core, whose log sink is the embedder's).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "base/progress_meter.h"

namespace di::engine {

class WeightProgress {
 public:
  virtual ~WeightProgress() = default;
  virtual void advance(int64_t bytes) = 0;
};

// The load running on this thread in this library, or null.
WeightProgress* current_weight_progress();

// Makes `p` the current load of this thread for its lifetime (null: none).
class ScopedWeightProgress {
 public:
  explicit ScopedWeightProgress(WeightProgress* p);
  ~ScopedWeightProgress();
  ScopedWeightProgress(const ScopedWeightProgress&) = delete;
  ScopedWeightProgress& operator=(const ScopedWeightProgress&) = delete;

 private:
  WeightProgress* previous_;
};

// A load of `total_bytes` (the checkpoint's .safetensors files). `clock` gives seconds (default:
// the steady clock); `bar`: draw the terminal bar (default: log::progress_bar_available()),
// otherwise info records. finish() ends the bar's line; it is also called by the destructor.
class LoadProgress final : public WeightProgress {
 public:
  explicit LoadProgress(int64_t total_bytes, std::function<double()> clock = {}, std::optional<bool> bar = {},
                        log::ProgressConfig config = {});
  ~LoadProgress() override;
  void advance(int64_t bytes) override;
  void finish();

 private:
  void emit(const std::optional<log::ProgressOutput>& out);
  std::function<double()> clock_;
  int64_t done_ = 0;
  std::unique_ptr<log::ProgressMeter> meter_;
  bool finished_ = false;
};

}  // namespace di::engine
