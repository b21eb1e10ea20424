// NcclCommunicator at world size 1 on one GPU, through the real NCCL path: the file rendezvous
// in a temp dir, ncclCommInitRank, and each collective on device buffers (identity for one rank,
// with the ragged all-to-all's offsets honoured); failures come back as Statuses naming the call.
// Two ranks on one GPU are refused by NCCL (duplicate GPU), so the two-process part of the
// rendezvous is tested on the CPU (tests/engine/rendezvous_file_test.cpp).
#include "engine/parallel/nccl_communicator.h"
#include "engine/parallel/rendezvous_tcp.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace di::engine::parallel {
namespace {

using kernels::cuda::DType;

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
    // NCCL checks buffer pointers only when asked; read once per process, at the first init.
    ::setenv("NCCL_CHECK_POINTERS", "1", 1);
    std::string tmpl = (std::filesystem::temp_directory_path() / "di_nccl_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    for (void* p : buffers_) cudaFree(p);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  NcclCommunicatorOptions options() const {
    NcclCommunicatorOptions o;
    o.rank = 0;
    o.world_size = 1;
    o.device = 0;
    o.rendezvous = dir_ + "/nccl_id";
    o.rendezvous_timeout_ms = 10000;
    return o;
  }
  std::unique_ptr<NcclCommunicator> make() {
    Result<std::unique_ptr<NcclCommunicator>> c = NcclCommunicator::create(options());
    EXPECT_TRUE(c.is_ok()) << c.status().message();
    return c.is_ok() ? std::move(c).value() : nullptr;
  }
  template <class T>
  T* device_copy(const std::vector<T>& host) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, host.size() * sizeof(T)), cudaSuccess);
    buffers_.push_back(p);
    EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    return static_cast<T*>(p);
  }
  template <class T>
  std::vector<T> host_copy(const T* dev, size_t n) {
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    std::vector<T> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  // A one-rank `collective` of `send` into a buffer of `fill`s leaves a copy of `send` there.
  using Collective = Status (NcclCommunicator::*)(const void*, void*, size_t, DType, cudaStream_t);
  template <class T>
  void expect_one_rank_copies(NcclCommunicator& comm, Collective collective, const std::vector<T>& send, T fill,
                              DType dtype) {
    T* ds = device_copy(send);
    T* dr = device_copy(std::vector<T>(send.size(), fill));
    ASSERT_TRUE((comm.*collective)(ds, dr, send.size(), dtype, stream_).is_ok());
    EXPECT_EQ(host_copy(dr, send.size()), send);
  }

  std::string dir_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> buffers_;
};

std::vector<float> ramp(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + 0.25f * static_cast<float>(i);
  return v;
}

// bf16 bit patterns of finite values (the top half of fp32 ones).
std::vector<uint16_t> bf16_ramp(size_t n) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    float f = -3.f + 0.5f * static_cast<float>(i);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    v[i] = static_cast<uint16_t>(bits >> 16);
  }
  return v;
}

TEST_F(NcclCommunicatorTest, InitThroughFileRendezvousAtWorldSizeOne) {
  const char* nvls_before = std::getenv("NCCL_NVLS_ENABLE");
  const std::string expected_nvls = nvls_before != nullptr ? nvls_before : "0";
  auto comm = make();
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->world_size(), 1);
  ASSERT_NE(std::getenv("NCCL_NVLS_ENABLE"), nullptr);
  EXPECT_EQ(std::string(std::getenv("NCCL_NVLS_ENABLE")), expected_nvls);
  // Rank 0 removes the id once the group has formed, so the path can serve the next launch.
  EXPECT_FALSE(std::filesystem::exists(options().rendezvous));
  EXPECT_TRUE(comm->barrier(stream_).is_ok());
  EXPECT_TRUE(comm->destroy().is_ok());
}

TEST_F(NcclCommunicatorTest, InitThroughTcpRendezvousAtWorldSizeOne) {
  // A port free now: the kernel's pick for a listener closed again.
  int32_t port = 0;
  {
    auto probe = RendezvousServer::listen("127.0.0.1", 0);
    ASSERT_TRUE(probe.is_ok()) << probe.status().message();
    port = (*probe)->port();
  }
  NcclCommunicatorOptions o = options();
  o.rendezvous = "tcp://127.0.0.1:" + std::to_string(port);
  Result<std::unique_ptr<NcclCommunicator>> c = NcclCommunicator::create(o);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const std::vector<float> f = ramp(64, 2.f);
  float* d = device_copy(f);
  ASSERT_TRUE((*c)->all_reduce_sum(d, f.size(), DType::kF32, stream_).is_ok());
  EXPECT_EQ(host_copy(d, f.size()), f);

  o.rendezvous = "tcp://127.0.0.1:notaport";
  Result<std::unique_ptr<NcclCommunicator>> bad = NcclCommunicator::create(o);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(NcclCommunicatorTest, AllReduceSumOfOneRankIsTheInput) {
  auto comm = make();
  ASSERT_NE(comm, nullptr);
  const std::vector<float> f = ramp(1000, -7.f);
  float* df = device_copy(f);
  ASSERT_TRUE(comm->all_reduce_sum(df, f.size(), DType::kF32, stream_).is_ok());
  EXPECT_EQ(host_copy(df, f.size()), f);
  const std::vector<uint16_t> b = bf16_ramp(333);
  uint16_t* db = device_copy(b);
  ASSERT_TRUE(comm->all_reduce_sum(db, b.size(), DType::kBF16, stream_).is_ok());
  EXPECT_EQ(host_copy(db, b.size()), b);
}

TEST_F(NcclCommunicatorTest, AllGatherOfOneRankCopiesSendToRecv) {
  auto comm = make();
  ASSERT_NE(comm, nullptr);
  expect_one_rank_copies(*comm, &NcclCommunicator::all_gather, ramp(257, 3.f), -1.f, DType::kF32);
  expect_one_rank_copies(*comm, &NcclCommunicator::all_gather, bf16_ramp(64), uint16_t{0}, DType::kBF16);
}

TEST_F(NcclCommunicatorTest, AllToAllOfOneRankSendsToItself) {
  auto comm = make();
  ASSERT_NE(comm, nullptr);
  expect_one_rank_copies(*comm, &NcclCommunicator::all_to_all, ramp(96, 1.f), -1.f, DType::kF32);
}

TEST_F(NcclCommunicatorTest, RaggedAllToAllHonoursCountsAndOffsets) {
  auto comm = make();
  ASSERT_NE(comm, nullptr);
  const std::vector<uint16_t> send = bf16_ramp(20);
  uint16_t* ds = device_copy(send);
  uint16_t* dr = device_copy(std::vector<uint16_t>(20, 0xFFFF));
  // Send elements [3, 8) to this rank's own slot at [7, 12) of recv; the rest stays untouched.
  AllToAllLayout layout{{5}, {3}, {5}, {7}};
  ASSERT_TRUE(comm->all_to_all_v(ds, dr, layout, DType::kBF16, stream_).is_ok());
  std::vector<uint16_t> want(20, 0xFFFF);
  for (size_t i = 0; i < 5; ++i) want[7 + i] = send[3 + i];
  EXPECT_EQ(host_copy(dr, 20), want);
}

TEST_F(NcclCommunicatorTest, MissingRendezvousFileTimesOutWithClearError) {
  NcclCommunicatorOptions o = options();
  o.rank = 1;  // waits for a rank 0 that never writes the id
  o.world_size = 2;
  o.rendezvous_timeout_ms = 50;
  Result<std::unique_ptr<NcclCommunicator>> c = NcclCommunicator::create(o);
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), StatusCode::kIo);
  EXPECT_NE(c.status().message().find(o.rendezvous), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("not written after 50 ms"), std::string::npos) << c.status().message();
}

TEST_F(NcclCommunicatorTest, BadOptionsAndCudaFailuresAreStatuses) {
  NcclCommunicatorOptions o = options();
  o.rank = 1;  // of world size 1
  Result<std::unique_ptr<NcclCommunicator>> bad_rank = NcclCommunicator::create(o);
  ASSERT_FALSE(bad_rank.is_ok());
  EXPECT_EQ(bad_rank.status().code(), StatusCode::kInvalidArgument);

  o = options();
  o.device = 4096;
  Result<std::unique_ptr<NcclCommunicator>> bad_device = NcclCommunicator::create(o);
  ASSERT_FALSE(bad_device.is_ok());
  EXPECT_EQ(bad_device.status().code(), StatusCode::kDevice);
  EXPECT_EQ(bad_device.status().message().rfind("cudaSetDevice: ", 0), 0u) << bad_device.status().message();
  EXPECT_FALSE(std::filesystem::exists(o.rendezvous));  // failed before publishing anything
}

TEST_F(NcclCommunicatorTest, NcclAndStateErrorsNameTheCall) {
  auto comm = make();
  ASSERT_NE(comm, nullptr);
  // A null buffer, caught by NCCL's pointer check.
  Status null_buffer = comm->all_reduce_sum(nullptr, 16, DType::kF32, stream_);
  ASSERT_FALSE(null_buffer.is_ok());
  EXPECT_EQ(null_buffer.message().rfind("ncclAllReduce: ", 0), 0u) << null_buffer.message();

  float* d = device_copy(ramp(8, 0.f));
  AllToAllLayout wrong{{8, 8}, {0, 8}, {8, 8}, {0, 8}};  // two peers in a group of one
  Status layout = comm->all_to_all_v(d, d, wrong, DType::kF32, stream_);
  EXPECT_EQ(layout.code(), StatusCode::kInvalidArgument) << layout.message();

  ASSERT_TRUE(comm->destroy().is_ok());
  Status after = comm->all_reduce_sum(d, 8, DType::kF32, stream_);
  EXPECT_EQ(after.code(), StatusCode::kState);
  EXPECT_NE(after.message().find("ncclAllReduce"), std::string::npos) << after.message();
  EXPECT_EQ(comm->barrier(stream_).code(), StatusCode::kState);
}

}  // namespace
}  // namespace di::engine::parallel
