// Calling the C ABI from a test: an error's message, a text's token ids, and a request's chunks
// pulled until its stream ends.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "deepinfer.h"

namespace di_test {

// The error's message ("" for none); releases it.
inline std::string error_text(di_error* err) {
  std::string s = err ? di_error_message(err) : "";
  di_error_destroy(err);
  return s;
}

// di_tokenizer_encode; a failure is a test failure (and no ids).
inline std::vector<int32_t> encode(const di_tokenizer* t, const std::string& text, uint32_t flags) {
  int32_t* ids = nullptr;
  size_t n = 0;
  EXPECT_EQ(di_tokenizer_encode(t, text.data(), text.size(), flags, &ids, &n, nullptr), DI_OK);
  std::vector<int32_t> out(ids, ids + n);
  di_free(ids);
  return out;
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
