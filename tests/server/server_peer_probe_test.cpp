// PeerProbe on real loopback connections: it finds the accepted socket by its address pair and
// reports the client gone exactly when the client closed or reset it, not while it waits or
// sends more bytes.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "server/peer_probe.h"
#include "tests/server/loopback_connection.h"

namespace di::server {
namespace {

// The probe sees the peer's close only after the FIN arrived; on loopback that is at once, but
// give it a bounded number of tries rather than assume.
bool gone_soon(PeerProbe& p) {
  for (int i = 0; i < 200; ++i) {
    if (p.client_gone()) return true;
    usleep(5000);
  }
  return false;
}

TEST(PeerProbe, FindsTheAcceptedSocketByItsAddressPair) {
  Connection c;
  open_connection(c);
  EXPECT_EQ(find_connection_socket("127.0.0.1", c.server_port, "127.0.0.1", c.client_port), c.accepted);
  EXPECT_EQ(find_connection_socket("", c.server_port, "127.0.0.1", c.client_port), c.accepted);
  EXPECT_EQ(find_connection_socket("127.0.0.1", c.server_port, "127.0.0.1", c.server_port), -1);
  EXPECT_EQ(find_connection_socket("127.0.0.1", c.server_port, "127.0.0.2", c.client_port), -1);
}

TEST(PeerProbe, AWaitingOrPipeliningClientIsThereAndAClosedOneIsGone) {
  Connection c;
  open_connection(c);
  PeerProbe p("127.0.0.1", c.server_port, "127.0.0.1", c.client_port);
  EXPECT_FALSE(p.client_gone());
  EXPECT_EQ(p.fd(), c.accepted);
  ASSERT_EQ(write(c.client, "GET / HTTP/1.1\r\n", 16), 16);  // a pipelined next request
  usleep(20000);
  EXPECT_FALSE(p.client_gone());
  char buf[16];
  EXPECT_EQ(read(c.accepted, buf, sizeof buf), 16) << "the probe only peeks: the bytes are still there";
  close(c.client);
  c.client = -1;
  EXPECT_TRUE(gone_soon(p));
}

TEST(PeerProbe, AResetConnectionIsGone) {
  Connection c;
  open_connection(c);
  PeerProbe p("127.0.0.1", c.server_port, "127.0.0.1", c.client_port);
  EXPECT_FALSE(p.client_gone());
  linger l{1, 0};  // close with RST
  ASSERT_EQ(setsockopt(c.client, SOL_SOCKET, SO_LINGER, &l, sizeof l), 0);
  close(c.client);
  c.client = -1;
  EXPECT_TRUE(gone_soon(p));
}

TEST(PeerProbe, AnUnknownConnectionNeverReportsGone) {
  PeerProbe p("127.0.0.1", 1, "127.0.0.1", 1);
  EXPECT_FALSE(p.client_gone());
  EXPECT_EQ(p.fd(), -1);
}

}  // namespace
}  // namespace di::server
