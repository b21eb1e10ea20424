// CUDA device discovery and error checking shared by every kernel file. Host-only header: it
// must compile without nvcc so capi/ can ask how many GPUs there are.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace di::kernels::cuda {

// Number of visible CUDA devices; 0 when there is no driver or no GPU (never fails).
int32_t device_count();

// Streaming multiprocessors of the current device, read once per process (1 when unknown): the
// launchers size their grids by it.
int32_t device_sm_count();

// Whether kernels that support it launch with programmatic dependent launch (launch_pdl in
// common.cuh): on unless the environment sets DEEPINFER_DISABLE_PDL=1, read once (the switch for
// measuring what it gains, and for ruling it out when a kernel misbehaves).
bool pdl_enabled();

// Turns a cudaError_t (passed as int to keep cuda_runtime.h out of this header) into a Status
// naming the call that failed.
Status cuda_status(int error, const char* what);

}  // namespace di::kernels::cuda
