// Keyed RNG: the uniform draw for a sampled token is a pure function of (seed, completion index,
// position), so a token never depends on batch composition, preemption or thread timing. The
// same functions run on the host and in the device sampler, so a seeded request draws the same
// token on the CPU and on the GPU.
#pragma once

#include <cstdint>

#include "base/host_device.h"

namespace di::kernels {

DI_HOST_DEVICE inline uint64_t rng_mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A double in [0, 1) from 53 random bits.
DI_HOST_DEVICE inline double keyed_uniform(uint64_t seed, uint64_t index, uint64_t position) {
  const uint64_t h = rng_mix(rng_mix(rng_mix(seed) ^ (index * 0xd1b54a32d192ed03ULL)) ^ position);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace di::kernels
