// WriteStallWatch on real loopback connections: a peer that reads nothing (a tiny receive
// buffer) is stalled once the timeout passes with bytes pending; a peer that reads is not, nor
// a connection with nothing pending, nor an unknown socket.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/write_stall.h"
#include "tests/server/loopback_connection.h"

namespace di::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A loopback connection whose client side has the smallest receive buffer the kernel allows;
// both ends non-blocking.
void open_small_window(Connection& c) {
  open_connection(c, /*client_rcvbuf=*/1024);
  ASSERT_EQ(fcntl(c.accepted, F_SETFL, fcntl(c.accepted, F_GETFL) | O_NONBLOCK), 0);
  ASSERT_EQ(fcntl(c.client, F_SETFL, fcntl(c.client, F_GETFL) | O_NONBLOCK), 0);
}

// Writes far more than the peer's window holds (the send buffer takes the rest).
void write_plenty(int fd) {
  const std::vector<char> block(256 * 1024, 'x');
  ASSERT_GT(send(fd, block.data(), block.size(), MSG_NOSIGNAL), 0);
}

// Polls until the watch reports a stall or `limit` passes; returns how long it took.
milliseconds time_to_stall(WriteStallWatch& w, milliseconds limit) {
  const auto start = Clock::now();
  while (Clock::now() - start < limit) {
    if (w.stalled()) return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    std::this_thread::sleep_for(milliseconds(10));
  }
  return limit;
}

TEST(WriteStallWatch, APeerThatReadsNothingStallsAfterTheTimeout) {
  Connection c;
  open_small_window(c);
  WriteStallWatch w(c.accepted, milliseconds(200));
  const auto start = Clock::now();
  write_plenty(c.accepted);
  // Measured ~0.2 s; the bound leaves 50 times that for a loaded machine.
  const milliseconds took = time_to_stall(w, milliseconds(10000));
  EXPECT_LT(took, milliseconds(10000)) << "never stalled";
  EXPECT_GE(Clock::now() - start, milliseconds(200)) << "stalled before the timeout";
}

TEST(WriteStallWatch, APeerThatReadsIsNotStalled) {
  Connection c;
  open_small_window(c);
  WriteStallWatch w(c.accepted, milliseconds(200));
  write_plenty(c.accepted);
  ASSERT_LT(time_to_stall(w, milliseconds(10000)), milliseconds(10000));
  // The client takes what arrived: acknowledged bytes move, so the watch starts over.
  char buf[4096];
  ssize_t got = 0;
  for (int i = 0; i < 1000 && got <= 0; ++i) {
    got = recv(c.client, buf, sizeof buf, 0);
    if (got <= 0) std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_GT(got, 0);
  bool stalled_after_read = true;
  for (int i = 0; i < 1000 && stalled_after_read; ++i) {
    stalled_after_read = w.stalled();
    if (stalled_after_read) std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_FALSE(stalled_after_read) << "reading did not count as progress";
}

TEST(WriteStallWatch, NothingPendingOrNoSocketIsNeverStalled) {
  Connection c;
  open_small_window(c);
  WriteStallWatch idle(c.accepted, milliseconds(1));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(idle.stalled());
  EXPECT_FALSE(idle.stalled(Clock::now() + std::chrono::hours(1)));
  WriteStallWatch unknown(-1, milliseconds(1));
  EXPECT_FALSE(unknown.stalled(Clock::now() + std::chrono::hours(1)));
}

}  // namespace
}  // namespace di::server
