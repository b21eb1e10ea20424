// The TCP rendezvous with real processes on the loopback: rank 0's blob reaches every peer,
// peers retry until rank 0 listens, and both sides time out with errors naming the address.
#include "engine/parallel/rendezvous_tcp.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/engine/rendezvous_test_util.h"

namespace di::engine::parallel {
namespace {

using testing::spawn;
using testing::wait_exit;

std::string test_blob() { return testing::test_blob(53, 5); }

// A port nobody listens on now: the kernel's pick for a listener that is then closed.
int32_t free_port() {
  auto s = RendezvousServer::listen("127.0.0.1", 0);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? (*s)->port() : 0;
}

TEST(RendezvousTcp, BlobReachesEveryPeerProcess) {
  auto server = RendezvousServer::listen("127.0.0.1", 0);
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  const int32_t port = (*server)->port();
  ASSERT_GT(port, 0);
  const std::string blob = test_blob();
  std::vector<pid_t> peers;
  for (int i = 0; i < 3; ++i) {
    peers.push_back(spawn([&] {
      Result<std::string> got = fetch_rendezvous_blob("127.0.0.1", port, 128, 60000);
      return got.is_ok() && *got == blob ? 0 : 1;
    }));
    ASSERT_GT(peers.back(), 0);
  }
  Status served = (*server)->serve(blob, 3, 60000);
  for (pid_t p : peers) EXPECT_EQ(wait_exit(p), 0);
  EXPECT_TRUE(served.is_ok()) << served.message();
}

TEST(RendezvousTcp, PeerRetriesUntilRankZeroListens) {
  const int32_t port = free_port();
  const std::string blob = test_blob();
  // The peer starts first and finds nothing listening; rank 0 comes up afterwards.
  pid_t peer = spawn([&] {
    Result<std::string> got = fetch_rendezvous_blob("127.0.0.1", port, 128, 60000);
    return got.is_ok() && *got == blob ? 0 : 1;
  });
  ASSERT_GT(peer, 0);
  auto server = RendezvousServer::listen("127.0.0.1", port);
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  EXPECT_TRUE((*server)->serve(blob, 1, 60000).is_ok());
  EXPECT_EQ(wait_exit(peer), 0);
}

TEST(RendezvousTcp, UnreachableRankZeroTimesOutNamingTheAddress) {
  const int32_t port = free_port();
  Result<std::string> got = fetch_rendezvous_blob("127.0.0.1", port, 128, 50);
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIo);
  const std::string& m = got.status().message();
  EXPECT_NE(m.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << m;
  EXPECT_NE(m.find("not reachable within 50 ms"), std::string::npos) << m;
}

TEST(RendezvousTcp, ServerTimesOutSayingHowManyRanksCame) {
  auto server = RendezvousServer::listen("127.0.0.1", 0);
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  Status st = (*server)->serve(test_blob(), 2, 30);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("0 of 2 ranks connected within 30 ms"), std::string::npos) << st.message();
}

TEST(RendezvousTcp, ParsesTcpHostPort) {
  std::string host;
  int32_t port = 0;
  ASSERT_TRUE(parse_tcp_rendezvous("tcp://10.0.0.2:29500", &host, &port));
  EXPECT_EQ(host, "10.0.0.2");
  EXPECT_EQ(port, 29500);
  ASSERT_TRUE(parse_tcp_rendezvous("tcp://node-0.cluster:1", &host, &port));
  EXPECT_EQ(host, "node-0.cluster");
  for (const char* bad : {"/tmp/id", "tcp://host", "tcp://:29500", "tcp://host:", "tcp://host:0", "tcp://host:65536",
                          "tcp://host:29a"}) {
    EXPECT_FALSE(parse_tcp_rendezvous(bad, &host, &port)) << bad;
  }
}

}  // namespace
}  // namespace di::engine::parallel
