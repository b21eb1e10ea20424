// Prepared: the Python object over one di_prepared (recipe.cpp binds it, engine.cpp submits
// it). Immutable in C; the lock only keeps close() from freeing it under a reader.
#pragma once

#include <mutex>
#include <shared_mutex>

#include "bindings/python/src/native.h"

namespace di::python {

class Prepared {
 public:
  explicit Prepared(di_prepared* p) : ptr_(p) {}
  ~Prepared() { di_prepared_destroy(ptr_); }
  void close() {
    py::gil_scoped_release nogil;
    std::unique_lock lock(mu_);
    di_prepared_destroy(ptr_);
    ptr_ = nullptr;
  }
  // Holds the handle for a call that must not race close().
  template <class F>
  auto with(F&& f) {
    std::shared_lock lock(mu_);
    if (!ptr_) raise_closed("Prepared");
    return f(ptr_);
  }
  template <const char* (*Fn)(const di_prepared*, size_t*)>
  py::str text() {
    return with([](di_prepared* p) {
      size_t len = 0;
      const char* s = Fn(p, &len);
      return utf8(s, len);
    });
  }

 private:
  std::shared_mutex mu_;
  di_prepared* ptr_ = nullptr;
};


}  // namespace di::python
