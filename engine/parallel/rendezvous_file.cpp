#include "engine/parallel/rendezvous_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace di::engine::parallel {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Writes all of `data` to `fd`, retrying short writes and EINTR.
bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

Status publish_rendezvous_file(const std::string& path, const std::string& blob) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    return Status::state("rendezvous file " + path +
                         " already exists (left by an earlier launch?): remove it or pick a new path");
  }
  // The pid keeps two writers that race on one path from sharing a temporary file.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::io("rendezvous file " + tmp + ": open: " + errno_text());
  bool ok = write_all(fd, blob.data(), blob.size()) && ::fsync(fd) == 0;
  std::string err = ok ? "" : errno_text();
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno_text();
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return Status::io("rendezvous file " + tmp + ": write: " + err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno_text();
    ::unlink(tmp.c_str());
    return Status::io("rendezvous file " + path + ": rename: " + err);
  }
  return Status::ok();
}

Result<std::string> wait_for_rendezvous_file(const std::string& path, int64_t size, int64_t timeout_ms) {
  if (size <= 0) return Status::invalid_argument("rendezvous size: expected > 0, got " + std::to_string(size));
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  for (;;) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      std::string blob(static_cast<size_t>(size), '\0');
      size_t got = 0;
      while (got < blob.size()) {
        ssize_t r = ::read(fd, blob.data() + got, blob.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<size_t>(r);
      }
      ::close(fd);
      // rename() publishes whole files, so a short one was not written by publish_rendezvous_file.
      if (got != blob.size()) {
        return Status::io("rendezvous file " + path + ": expected " + std::to_string(size) + " bytes, got " +
                          std::to_string(got));
      }
      return blob;
    }
    if (errno != ENOENT) return Status::io("rendezvous file " + path + ": open: " + errno_text());
    if (Clock::now() >= deadline) {
      return Status::io("rendezvous file " + path + ": not written after " + std::to_string(timeout_ms) +
                        " ms (rank 0 writes it: is rank 0 running, with the same path on a filesystem all "
                        "ranks share?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Status remove_rendezvous_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::io("rendezvous file " + path + ": unlink: " + errno_text());
  }
  return Status::ok();
}

}  // namespace di::engine::parallel
