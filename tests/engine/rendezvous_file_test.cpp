// The file rendezvous the NCCL ranks meet through, with real processes: a blob published by one
// process reaches another whichever starts first, a missing one times out with an error naming
// the path, and a stale file from an earlier launch is refused.
#include "engine/parallel/rendezvous_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/engine/rendezvous_test_util.h"

namespace di::engine::parallel {
namespace {

using testing::spawn;
using testing::wait_exit;

std::string test_blob() { return testing::test_blob(37, 11); }

class RendezvousFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "di_rendezvous_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/nccl_id";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, path_;
};

TEST_F(RendezvousFile, BlobPublishedByRankZeroReachesRankOneProcess) {
  const std::string blob = test_blob();
  // Rank 1 (the child) starts waiting before or after rank 0 publishes: either way it reads it whole.
  pid_t rank1 = spawn([&] {
    Result<std::string> got = wait_for_rendezvous_file(path_, 128, 60000);
    return got.is_ok() && *got == blob ? 0 : 1;
  });
  ASSERT_GT(rank1, 0);
  ASSERT_TRUE(publish_rendezvous_file(path_, blob).is_ok());
  EXPECT_EQ(wait_exit(rank1), 0);
  // No temporary file is left beside it.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(RendezvousFile, BlobPublishedByAnotherProcessReachesThisOne) {
  const std::string blob = test_blob();
  pid_t rank0 = spawn([&] { return publish_rendezvous_file(path_, blob).is_ok() ? 0 : 1; });
  ASSERT_GT(rank0, 0);
  Result<std::string> got = wait_for_rendezvous_file(path_, 128, 60000);
  EXPECT_EQ(wait_exit(rank0), 0);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(*got, blob);
}

TEST_F(RendezvousFile, MissingFileTimesOutWithErrorNamingThePath) {
  Result<std::string> got = wait_for_rendezvous_file(path_, 128, 30);
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIo);
  EXPECT_NE(got.status().message().find(path_), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("not written after 30 ms"), std::string::npos) << got.status().message();
}

TEST_F(RendezvousFile, StaleFileIsRefusedUntilRemoved) {
  ASSERT_TRUE(publish_rendezvous_file(path_, test_blob()).is_ok());
  Status again = publish_rendezvous_file(path_, test_blob());
  ASSERT_FALSE(again.is_ok());
  EXPECT_EQ(again.code(), StatusCode::kState);
  EXPECT_NE(again.message().find("already exists"), std::string::npos) << again.message();
  ASSERT_TRUE(remove_rendezvous_file(path_).is_ok());
  EXPECT_TRUE(remove_rendezvous_file(path_).is_ok());  // already gone: fine
  EXPECT_TRUE(publish_rendezvous_file(path_, test_blob()).is_ok());
}

TEST_F(RendezvousFile, TruncatedFileIsAnError) {
  std::ofstream(path_) << "ten bytes!";
  Result<std::string> got = wait_for_rendezvous_file(path_, 128, 1000);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("expected 128 bytes, got 10"), std::string::npos) << got.status().message();
}

}  // namespace
}  // namespace di::engine::parallel
