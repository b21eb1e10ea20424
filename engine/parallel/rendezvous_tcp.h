// The TCP form of the ranks' rendezvous, for nodes without a shared filesystem: rank 0 listens
// on host:port and hands the blob (NCCL's unique id) to each of the other ranks, which connect
// with retries until a timeout. Plain POSIX sockets, no NCCL: tested on the CPU with processes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace di::engine::parallel {

// Rank 0's side. listen() binds first, so peers that connect before serve() wait in the backlog.
class RendezvousServer {
 public:
  // `port` 0 takes a free port (port() says which). `host` "" listens on every interface.
  static Result<std::unique_ptr<RendezvousServer>> listen(const std::string& host, int32_t port);
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  int32_t port() const { return port_; }
  // Sends `blob` to `peers` connections, one each; fails after `timeout_ms` with how many came.
  Status serve(const std::string& blob, int32_t peers, int64_t timeout_ms);

 private:
  RendezvousServer(int fd, int32_t port) : fd_(fd), port_(port) {}
  int fd_ = -1;
  int32_t port_ = 0;
};

// A peer's side: connects to host:port (retrying while rank 0 is not up yet) and reads `size`
// bytes; an error after `timeout_ms` names the address.
Result<std::string> fetch_rendezvous_blob(const std::string& host, int32_t port, int64_t size, int64_t timeout_ms);

// Splits "tcp://host:port" into its parts; false when `spec` is not of that form.
bool parse_tcp_rendezvous(const std::string& spec, std::string* host, int32_t* port);

}  // namespace di::engine::parallel
