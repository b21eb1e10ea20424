#include "engine/parallel/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

#include "engine/parallel/rendezvous_file.h"
#include "engine/parallel/rendezvous_tcp.h"

namespace di::engine::parallel {
namespace {

using kernels::cuda::DType;

Status nccl_status(const char* call, ncclResult_t r, ncclComm_t comm) {
  if (r == ncclSuccess) return Status::ok();
  std::string msg = std::string(call) + ": " + ncclGetErrorString(r);
  // The last error carries NCCL's own detail (which argument, which peer).
  const char* last = comm != nullptr ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') msg += " (" + std::string(last) + ")";
  return r == ncclInvalidArgument || r == ncclInvalidUsage ? Status::invalid_argument(msg) : Status::device(msg);
}

Status cuda_status(const char* call, cudaError_t e) {
  if (e == cudaSuccess) return Status::ok();
  return Status::device(std::string(call) + ": " + cudaGetErrorString(e));
}

ncclDataType_t nccl_dtype(DType t) { return t == DType::kF32 ? ncclFloat32 : ncclBfloat16; }

}  // namespace

void disable_nvlink_multicast_unless_set() {
  // overwrite = 0: a value the user exported wins.
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);
  ::setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 0);
  ::setenv("NVSHMEM_DISABLE_NVLS", "1", 0);
}

Result<std::unique_ptr<NcclCommunicator>> NcclCommunicator::create(const NcclCommunicatorOptions& o) {
  if (o.world_size < 1) {
    return Status::invalid_argument("world_size: expected >= 1, got " + std::to_string(o.world_size));
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    return Status::invalid_argument("rank: expected 0.." + std::to_string(o.world_size - 1) + ", got " +
                                    std::to_string(o.rank));
  }
  if (o.rendezvous.empty()) {
    return Status::invalid_argument("rendezvous: expected a file path or tcp://host:port, got \"\"");
  }
  disable_nvlink_multicast_unless_set();
  DI_RETURN_IF_ERROR(cuda_status("cudaSetDevice", cudaSetDevice(o.device)));

  std::string tcp_host;
  int32_t tcp_port = 0;
  const bool tcp = parse_tcp_rendezvous(o.rendezvous, &tcp_host, &tcp_port);
  if (!tcp && o.rendezvous.rfind("tcp://", 0) == 0) {
    return Status::invalid_argument("rendezvous: expected tcp://host:port with a port in 1..65535, got \"" +
                                    o.rendezvous + "\"");
  }
  ncclUniqueId id;
  const int64_t id_size = sizeof(id.internal);
  if (o.rank == 0) {
    DI_RETURN_IF_ERROR(nccl_status("ncclGetUniqueId", ncclGetUniqueId(&id), nullptr));
    const std::string blob(id.internal, sizeof(id.internal));
    if (tcp) {
      DI_ASSIGN_OR_RETURN(auto server, RendezvousServer::listen("", tcp_port));
      DI_RETURN_IF_ERROR(server->serve(blob, o.world_size - 1, o.rendezvous_timeout_ms));
    } else {
      DI_RETURN_IF_ERROR(publish_rendezvous_file(o.rendezvous, blob));
    }
  } else {
    Result<std::string> blob = tcp ? fetch_rendezvous_blob(tcp_host, tcp_port, id_size, o.rendezvous_timeout_ms)
                                   : wait_for_rendezvous_file(o.rendezvous, id_size, o.rendezvous_timeout_ms);
    if (!blob.is_ok()) return std::move(blob).take_status();
    std::memcpy(id.internal, blob->data(), sizeof(id.internal));
  }
  ncclComm_t comm = nullptr;
  Status init = nccl_status("ncclCommInitRank", ncclCommInitRank(&comm, o.world_size, id, o.rank), nullptr);
  // Every rank has read the id once init returns (it waits for all of them), and on failure a
  // stale file would only mislead the next launch.
  if (o.rank == 0 && !tcp) {
    Status removed = remove_rendezvous_file(o.rendezvous);
    if (init.is_ok() && !removed.is_ok()) {
      ncclCommDestroy(comm);
      return removed;
    }
  }
  DI_RETURN_IF_ERROR(std::move(init).with_context("rank " + std::to_string(o.rank)));
  std::unique_ptr<NcclCommunicator> c(new NcclCommunicator(comm, o.rank, o.world_size, o.device));
  DI_RETURN_IF_ERROR(cuda_status("cudaMalloc", cudaMalloc(&c->barrier_word_, sizeof(float))));
  DI_RETURN_IF_ERROR(cuda_status("cudaMemset", cudaMemset(c->barrier_word_, 0, sizeof(float))));
  return c;
}

NcclCommunicator::NcclCommunicator(ncclComm* comm, int32_t rank, int32_t world_size, int32_t device)
    : comm_(comm), rank_(rank), world_size_(world_size), device_(device) {}

NcclCommunicator::~NcclCommunicator() { destroy(); }

Status NcclCommunicator::check_open(const char* call) const {
  if (comm_ == nullptr) return Status::state(std::string(call) + ": the communicator was destroyed");
  return Status::ok();
}

Status NcclCommunicator::all_reduce_sum(void* buffer, size_t count, DType dtype, cudaStream_t stream) {
  DI_RETURN_IF_ERROR(check_open("ncclAllReduce"));
  return nccl_status("ncclAllReduce",
                     ncclAllReduce(buffer, buffer, count, nccl_dtype(dtype), ncclSum, comm_, stream), comm_);
}

Status NcclCommunicator::all_gather(const void* send, void* recv, size_t count, DType dtype, cudaStream_t stream) {
  DI_RETURN_IF_ERROR(check_open("ncclAllGather"));
  return nccl_status("ncclAllGather", ncclAllGather(send, recv, count, nccl_dtype(dtype), comm_, stream), comm_);
}

Status NcclCommunicator::all_to_all(const void* send, void* recv, size_t count, DType dtype, cudaStream_t stream) {
  AllToAllLayout layout;
  for (int32_t p = 0; p < world_size_; ++p) {
    layout.send_counts.push_back(count);
    layout.recv_counts.push_back(count);
    layout.send_offsets.push_back(static_cast<size_t>(p) * count);
    layout.recv_offsets.push_back(static_cast<size_t>(p) * count);
  }
  return all_to_all_v(send, recv, layout, dtype, stream);
}

Status NcclCommunicator::all_to_all_v(const void* send, void* recv, const AllToAllLayout& layout, DType dtype,
                                      cudaStream_t stream) {
  DI_RETURN_IF_ERROR(check_open("all_to_all"));
  const size_t n = static_cast<size_t>(world_size_);
  if (layout.send_counts.size() != n || layout.send_offsets.size() != n || layout.recv_counts.size() != n ||
      layout.recv_offsets.size() != n) {
    return Status::invalid_argument("all_to_all: expected " + std::to_string(n) +
                                    " send/recv counts and offsets (one per rank), got " +
                                    std::to_string(layout.send_counts.size()) + "/" +
                                    std::to_string(layout.send_offsets.size()) + "/" +
                                    std::to_string(layout.recv_counts.size()) + "/" +
                                    std::to_string(layout.recv_offsets.size()));
  }
  const size_t esize = static_cast<size_t>(kernels::cuda::dtype_bytes(dtype));
  const ncclDataType_t t = nccl_dtype(dtype);
  // One group: NCCL matches every send with its peer's receive without ordering deadlocks.
  DI_RETURN_IF_ERROR(nccl_status("ncclGroupStart", ncclGroupStart(), comm_));
  Status st;
  for (size_t p = 0; p < n && st.is_ok(); ++p) {
    const int peer = static_cast<int>(p);
    if (layout.send_counts[p] > 0) {
      const char* src = static_cast<const char*>(send) + layout.send_offsets[p] * esize;
      st = nccl_status("ncclSend", ncclSend(src, layout.send_counts[p], t, peer, comm_, stream), comm_);
    }
    if (st.is_ok() && layout.recv_counts[p] > 0) {
      char* dst = static_cast<char*>(recv) + layout.recv_offsets[p] * esize;
      st = nccl_status("ncclRecv", ncclRecv(dst, layout.recv_counts[p], t, peer, comm_, stream), comm_);
    }
  }
  // The group is closed even after a failed call, or the next collective would join it.
  Status end = nccl_status("ncclGroupEnd", ncclGroupEnd(), comm_);
  return st.is_ok() ? end : st;
}

Status NcclCommunicator::barrier(cudaStream_t stream) {
  DI_RETURN_IF_ERROR(check_open("barrier"));
  DI_RETURN_IF_ERROR(all_reduce_sum(barrier_word_, 1, DType::kF32, stream));
  return cuda_status("cudaStreamSynchronize", cudaStreamSynchronize(stream));
}

Status NcclCommunicator::destroy() {
  if (comm_ == nullptr) return Status::ok();
  Status st = nccl_status("ncclCommDestroy", ncclCommDestroy(comm_), nullptr);
  comm_ = nullptr;
  if (barrier_word_ != nullptr) {
    Status freed = cuda_status("cudaFree", cudaFree(barrier_word_));
    barrier_word_ = nullptr;
    if (st.is_ok()) st = freed;
  }
  return st;
}

}  // namespace di::engine::parallel
