// upload_to_device: a CUDA model's weight copies, host to device, through two pinned staging
// buffers: the CPU threads copy one chunk of the source (the checkpoint mapping or a converted
// array) into one buffer while the copy engine moves the other, where cudaMemcpy from pageable
// memory stages it piece by piece on one driver thread. Returns once the bytes are on the device
// and orders on the default stream, as copy_to_device does. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>

#include "base/status.h"

namespace di::engine::cuda {

Status upload_to_device(void* dst, const void* src, int64_t bytes);

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
