// DeviceBuffer and the copy helpers: thin, checked wrappers over the CUDA runtime.
#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"

namespace di::kernels::cuda {

Status DeviceBuffer::allocate(int64_t bytes) {
  reset();
  if (bytes < 0) return Status::invalid_argument("DeviceBuffer: negative size");
  if (bytes == 0) return Status::ok();
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, static_cast<size_t>(bytes));
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status::out_of_memory("cudaMalloc of " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(e));
  }
  ptr_ = p;
  bytes_ = bytes;
  return Status::ok();
}

Status DeviceBuffer::reserve(int64_t bytes) {
  if (bytes <= bytes_) return Status::ok();
  return allocate(bytes);
}

void DeviceBuffer::reset() {
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::free_raw(void* p) {
  if (p) cudaFree(p);
}

Status copy_to_device(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return Status::ok();
  return cuda_status(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
Status copy_to_host(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return Status::ok();
  return cuda_status(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}
Status copy_to_device_async(void* dst, const void* src, int64_t bytes, void* stream) {
  if (bytes <= 0) return Status::ok();
  return cuda_status(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice,
                                     static_cast<cudaStream_t>(stream)),
                     "cudaMemcpyAsync H2D");
}
Status copy_to_host_async(void* dst, const void* src, int64_t bytes, void* stream) {
  if (bytes <= 0) return Status::ok();
  return cuda_status(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost,
                                     static_cast<cudaStream_t>(stream)),
                     "cudaMemcpyAsync D2H");
}
Status copy_device_to_device(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return Status::ok();
  return cuda_status(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
}
Status fill_zero(void* dst, int64_t bytes) {
  if (bytes <= 0) return Status::ok();
  return cuda_status(cudaMemset(dst, 0, static_cast<size_t>(bytes)), "cudaMemset");
}
Status stream_synchronize(void* stream) {
  return cuda_status(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

Status device_memory(int64_t* free_bytes, int64_t* total_bytes) {
  size_t f = 0, t = 0;
  DI_RETURN_IF_ERROR(cuda_status(cudaMemGetInfo(&f, &t), "cudaMemGetInfo"));
  *free_bytes = static_cast<int64_t>(f);
  *total_bytes = static_cast<int64_t>(t);
  return Status::ok();
}

}  // namespace di::kernels::cuda
