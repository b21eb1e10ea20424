// PeerProbe: tells, without writing to it, whether the client of a running request has closed
// its connection. Owns no socket (HttpListener does) and never reads or writes request bytes.
// Handlers get no socket, so the probe finds it by the request's address pair.
#pragma once

#include <string>

namespace di::server {

class PeerProbe {
 public:
  // The connection's two ends as HttpRequest reports them (local_addr/local_port,
  // remote_addr/remote_port). Nothing is looked up until the first client_gone().
  PeerProbe(std::string local_addr, int local_port, std::string remote_addr, int remote_port);

  // True once the client closed or reset the connection: a readable socket whose peek finds
  // the end of the stream, or an error/hang-up. Bytes the client sent ahead (a pipelined
  // request) mean it is still there. A client that only half-closes (shutdown of its sending
  // side while it waits for the answer) counts as gone, as in most HTTP servers. Returns false
  // when the socket cannot be found (then nothing can be said). Only the thread that runs the
  // request's handler may call it: the socket stays open exactly that long.
  bool client_gone();

  // The descriptor found (-1: not found or not looked up yet). For tests and logs.
  int fd() const { return fd_; }

 private:
  std::string local_addr_, remote_addr_;
  int local_port_, remote_port_;
  bool looked_up_ = false;
  int fd_ = -1;
};

// The open TCP socket of this process whose local port is `local_port` and whose peer is
// `remote_addr`:`remote_port` (numeric host as getnameinfo writes it), or -1. Linux: it walks
// /proc/self/fd. A TCP connection is unique by its address pair, so at most one matches.
int find_connection_socket(const std::string& local_addr, int local_port,
                           const std::string& remote_addr, int remote_port);

}  // namespace di::server
