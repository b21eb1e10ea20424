// Host vectors to and from device buffers for the kernel tests. A failed copy is recorded as a
// test failure where it happens, so a test reads its inputs and outputs in one line each.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cuda/device_buffer.h"

namespace di::test {

// A device copy of `v` that lives as long as the returned buffer (one element at least, so an
// empty input still has an address to pass).
template <typename T>
kernels::cuda::DeviceBuffer upload(const std::vector<T>& v) {
  kernels::cuda::DeviceBuffer b;
  EXPECT_TRUE(b.allocate(static_cast<int64_t>(std::max<size_t>(1, v.size()) * sizeof(T))).is_ok());
  EXPECT_TRUE(kernels::cuda::copy_to_device(b.get(), v.data(), static_cast<int64_t>(v.size() * sizeof(T))).is_ok());
  return b;
}

// The first `n` elements of `b`.
template <typename T = float>
std::vector<T> download(const kernels::cuda::DeviceBuffer& b, size_t n) {
  std::vector<T> v(n);
  EXPECT_TRUE(kernels::cuda::copy_to_host(v.data(), b.get(), static_cast<int64_t>(n * sizeof(T))).is_ok());
  return v;
}

}  // namespace di::test
