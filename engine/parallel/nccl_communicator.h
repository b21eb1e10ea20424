// NcclCommunicator: one process per GPU, one NCCL communicator per process; the collectives
// tensor and expert parallelism need (all-reduce, all-gather, all-to-all, barrier) on the
// caller's stream. Every NCCL or CUDA failure comes back as a Status naming the call. It knows
// no layout (which ranks form a TP or EP group is the caller's) and no model.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

struct ncclComm;  // nccl.h's communicator, kept out of this header

namespace di::engine::parallel {

struct NcclCommunicatorOptions {
  int32_t rank = 0;
  int32_t world_size = 1;
  int32_t device = 0;  // the CUDA device this rank drives
  // Where rank 0 publishes the NCCL unique id and the other ranks read it: a file all ranks see
  // (fresh for each launch; rank 0 removes it once the group has formed), or "tcp://host:port"
  // where rank 0 listens (on every interface, at that port) and the others connect.
  std::string rendezvous;
  int64_t rendezvous_timeout_ms = 300000;
};

// The peers' element counts and offsets (in elements, not bytes) of one all_to_all_v: entry p is
// what this rank sends to / receives from rank p.
struct AllToAllLayout {
  std::vector<size_t> send_counts, send_offsets;
  std::vector<size_t> recv_counts, recv_offsets;
};

class NcclCommunicator {
 public:
  // Sets NCCL_NVLS_ENABLE=0 unless the environment already sets it, exchanges the unique id
  // through options.rendezvous and joins the group (ncclCommInitRank: it returns once all
  // world_size ranks have joined).
  static Result<std::unique_ptr<NcclCommunicator>> create(const NcclCommunicatorOptions& options);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int32_t rank() const { return rank_; }
  int32_t world_size() const { return world_size_; }
  int32_t device() const { return device_; }

  // buffer[i] = sum over ranks of buffer[i], i < count, in place. Enqueued on `stream`.
  Status all_reduce_sum(void* buffer, size_t count, kernels::cuda::DType dtype, cudaStream_t stream);
  // recv[r * count + i] = rank r's send[i]; recv holds world_size * count elements.
  Status all_gather(const void* send, void* recv, size_t count, kernels::cuda::DType dtype, cudaStream_t stream);
  // Equal chunks: recv[p * count + i] = rank p's send[rank() * count + i]. Both hold
  // world_size * count elements.
  Status all_to_all(const void* send, void* recv, size_t count, kernels::cuda::DType dtype, cudaStream_t stream);
  // Expert parallelism's exchange: ragged chunks (tokens per expert owner), grouped sends and
  // receives to every peer, itself included.
  Status all_to_all_v(const void* send, void* recv, const AllToAllLayout& layout, kernels::cuda::DType dtype,
                      cudaStream_t stream);
  // Returns once every rank has reached it and `stream`'s work before it has finished.
  Status barrier(cudaStream_t stream);
  // Frees the communicator (ncclCommDestroy); later calls fail with a state error. The
  // destructor calls it when the owner has not.
  Status destroy();

 private:
  NcclCommunicator(ncclComm* comm, int32_t rank, int32_t world_size, int32_t device);
  Status check_open(const char* call) const;

  ncclComm* comm_ = nullptr;
  int32_t rank_ = 0;
  int32_t world_size_ = 1;
  int32_t device_ = 0;
  void* barrier_word_ = nullptr;  // one float on the device, all-reduced by barrier()
};

// Sets NCCL_NVLS_ENABLE=0 (NVLink multicast off, which the machines here require), and the
// same switch for torch and NVSHMEM in processes this one starts, each unless already set.
void disable_nvlink_multicast_unless_set();

}  // namespace di::engine::parallel
