// What the rendezvous tests share: the blob the ranks exchange, and running a rank in a forked
// process to read its exit code. Test code only.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace di::engine::parallel::testing {

// 128 bytes like ncclUniqueId, with zeros and high bytes in it: byte i is (i * mul + add) % 256.
inline std::string test_blob(size_t mul, size_t add) {
  std::string b(128, '\0');
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>((i * mul + add) % 256);
  return b;
}

// Runs `body` in a forked process, which exits with its return value; the child's pid.
template <class F>
pid_t spawn(F body) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  return pid;
}

// The exit code of child `pid`, or -1 if it did not exit normally.
inline int wait_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace di::engine::parallel::testing
