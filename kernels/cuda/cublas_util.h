// What the cuBLAS and cuBLASLt callers share: a status as a Status naming the call, and the
// descriptors of one cuBLASLt matmul, destroyed with their owner. Host code; CUDA builds only.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <string>

#include "base/status.h"

namespace di::kernels::cuda {

inline Status cublas_status(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return Status::device(std::string(what) + ": " + cublasGetStatusName(s) + ": " + cublasGetStatusString(s));
}

struct LtMatmulDescs {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtMatmulDescs() = default;
  LtMatmulDescs(const LtMatmulDescs&) = delete;
  LtMatmulDescs& operator=(const LtMatmulDescs&) = delete;
  ~LtMatmulDescs() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

}  // namespace di::kernels::cuda
