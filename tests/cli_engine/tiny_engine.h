// The tiny model folder of tiny_model_dir.h with an engine on it (default options), for the
// suites that share one of each across their tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "deepinfer.h"
#include "tests/cli_engine/tiny_model_dir.h"
#include "tests/common/capi_calls.h"

namespace di_test {

// Makes the folder (a new *dir, `<temp>/<prefix>-<pid>`) and the engine on it into *engine.
inline void open_tiny_engine(const std::string& prefix, std::string** dir, di_engine** engine) {
  *dir = new std::string;
  ASSERT_NO_FATAL_FAILURE(make_tiny_model_dir(prefix, *dir));
  di_error* err = nullptr;
  ASSERT_EQ(di_engine_create((*dir)->data(), (*dir)->size(), nullptr, engine, &err), DI_OK) << error_text(err);
}

// Undoes open_tiny_engine.
inline void close_tiny_engine(std::string* dir, di_engine* engine) {
  di_engine_destroy(engine);
  remove_tiny_model_dir(*dir);
  delete dir;
}

}  // namespace di_test
