// The base of the GPU test suites: SetUp skips every test when no CUDA device is present, so the
// GPU tests build and run (skipped) on machines without one.
#pragma once

#include <gtest/gtest.h>

#include "kernels/cuda/device.h"

namespace di::test {

template <class Base>
class CudaSuite : public Base {
 protected:
  void SetUp() override {
    if (kernels::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

using CudaTest = CudaSuite<::testing::Test>;
template <class Param>
using CudaTestWithParam = CudaSuite<::testing::TestWithParam<Param>>;

}  // namespace di::test
