// Calling the C ABI from a test: an error's message, and a request's chunks pulled until its
// stream ends.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "deepinfer.h"

namespace di_test {

// The error's message ("" for none); releases it.
inline std::string error_text(di_error* err) {
  std::string s = err ? di_error_message(err) : "";
  di_error_destroy(err);
  return s;
}

// Hands each chunk to `on_chunk`. A poll that returns neither a chunk nor the end is a test
// failure and ends the loop.
template <class F>
void for_each_chunk(di_request* r, F&& on_chunk) {
  for (;;) {
    di_chunk c;
    c.struct_size = sizeof c;
    const di_status st = di_poll_chunk(r, 60000, &c, nullptr);
    if (st == DI_END_OF_STREAM) return;
    EXPECT_EQ(st, DI_OK);
    if (st != DI_OK) return;
    on_chunk(c);
  }
}

}  // namespace di_test
