// StreamTimer: the device time between two points of a stream's work, by a pair of CUDA events,
// read after the host has waited past the second. Lets a model tell the engine what one part of
// a step took on the device when the whole step is enqueued before one wait. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include "base/status.h"

namespace di::engine::cuda {

class StreamTimer {
 public:
  StreamTimer() = default;
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // Record the start / the end on `stream` (a cudaStream_t); the events are made on first use.
  // Not while the stream is being captured into a graph.
  Status start(void* stream);
  Status stop(void* stream);
  // Seconds from start to stop once the stream has passed stop (after its synchronize); 0 before
  // both were recorded or when the events cannot be read.
  double seconds() const;

 private:
  void* begin_ = nullptr;  // cudaEvent_t
  void* end_ = nullptr;
  bool started_ = false, stopped_ = false;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
