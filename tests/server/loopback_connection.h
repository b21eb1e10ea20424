// A real loopback TCP connection for the tests of the server's socket watchers (PeerProbe,
// WriteStallWatch): the listener, the client and the accepted end, closed on destruction.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace di::server {

struct Connection {
  int listener = -1, client = -1, accepted = -1;
  int server_port = 0, client_port = 0;
  ~Connection() {
    for (int fd : {listener, client, accepted})
      if (fd >= 0) close(fd);
  }
};

inline int port_of(int fd, bool peer) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (peer) getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len);
  else getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// Connects a client to a fresh listener on 127.0.0.1 and accepts it. `client_rcvbuf` > 0 sets
// the client's receive buffer before connecting (the kernel rounds it up to its minimum).
inline void open_connection(Connection& c, int client_rcvbuf = 0) {
  c.listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(c.listener, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(c.listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(c.listener, 4), 0);
  c.server_port = port_of(c.listener, false);
  ASSERT_NE(c.server_port, 0);
  c.client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(c.client, 0);
  if (client_rcvbuf > 0)
    ASSERT_EQ(setsockopt(c.client, SOL_SOCKET, SO_RCVBUF, &client_rcvbuf, sizeof client_rcvbuf), 0);
  a.sin_port = htons(static_cast<uint16_t>(c.server_port));
  ASSERT_EQ(connect(c.client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  c.accepted = accept(c.listener, nullptr, nullptr);
  ASSERT_GE(c.accepted, 0);
  c.client_port = port_of(c.client, false);
}

}  // namespace di::server
