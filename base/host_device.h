// DI_HOST_DEVICE: marks an inline function that the host compiler and nvcc both compile, so the
// CPU path and a CUDA kernel run the very same arithmetic (the sampler's draw, for one).
#pragma once

#if defined(__CUDACC__)
#define DI_HOST_DEVICE __host__ __device__
#else
#define DI_HOST_DEVICE
#endif
