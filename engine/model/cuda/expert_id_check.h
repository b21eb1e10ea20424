// ExpertIdCheck: the device flag moe_group_pairs sets when a routed expert id is out of range,
// and its pinned host copy, read once the stream has finished a forward. A MoE model's forward
// enqueues the copy; check() turns a set flag into an error and clears it. It routes nothing.
// CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <string>

#include "base/status.h"
#include "engine/model/cuda/pinned_buffer.h"
#include "kernels/cuda/device_buffer.h"

namespace di::engine::cuda {

class ExpertIdCheck {
 public:
  // Allocates the flag and its pinned copy, both cleared.
  Status init();
  // The device flag, for moe_group_pairs' bad_id.
  int32_t* device() const { return flag_.as<int32_t>(); }
  // Before a forward: forget what the last one copied back.
  void clear_host() { *host_.as<int32_t>() = 0; }
  // At the end of a forward: the flag into the host copy, asynchronously on `stream`.
  Status copy_to_host(void* stream);
  // Once the stream has finished: an internal error naming `family` when an id was out of range
  // (the flag is cleared for the next forward).
  Status check(const std::string& family);

 private:
  kernels::cuda::DeviceBuffer flag_;
  PinnedBuffer host_;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
