// Handle: one library object shared by Python threads. Calls hold it shared (and run without
// the GIL where they may take time); close() takes it alone, so a handle is never destroyed
// under a call. A call on a closed handle raises StateError naming the class.
#pragma once

#include <mutex>
#include <shared_mutex>
#include <string>

#include "bindings/python/src/native.h"

namespace di::python {

template <class T, void (*Destroy)(T*)>
class Handle {
 public:
  explicit Handle(const char* what) : what_(what) {}
  Handle(const char* what, T* p) : ptr_(p), what_(what) {}
  // Destroy joins library threads that never need the GIL, so holding it here cannot deadlock.
  ~Handle() { Destroy(ptr_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  // create(f): f(T** out, di_error** err) -> di_status, without the GIL; raises on failure.
  template <class F>
  void create(F&& f) {
    di_error* err = nullptr;
    di_status st;
    {
      py::gil_scoped_release nogil;
      st = f(&ptr_, &err);
    }
    check(st, err);
  }

  // create() for the constructors of the form f(text, len, options, &out, &err): a path and the
  // di_options of `options` (None for NULL), as di_engine_create and di_recipe_create take.
  template <class Create>
  void create(const std::string& text, const py::object& options, Create* f) {
    di_options* o = options_ptr(options);
    create([&](T** out, di_error** err) { return f(text.data(), text.size(), o, out, err); });
  }

  void close() {
    py::gil_scoped_release nogil;
    std::unique_lock lock(mu_);
    Destroy(ptr_);
    ptr_ = nullptr;
  }
  bool closed() {
    std::shared_lock lock(mu_);
    return ptr_ == nullptr;
  }

  // f(T*) with the GIL held: quick calls, or ones that release it themselves.
  template <class F>
  auto with(F&& f) {
    std::shared_lock lock(mu_);
    if (!ptr_) raise_closed(what_);
    return f(ptr_);
  }

  // f(T*, di_error**) -> di_status without the GIL; returns the status, raises on an error.
  template <class F>
  di_status call(F&& f) {
    di_error* err = nullptr;
    di_status st;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      st = ptr_ ? f(ptr_, &err) : DI_E_STATE;
    }
    if (st == DI_E_STATE && !err) raise_closed(what_);
    return check(st, err);
  }

  // call() for the functions that hand back library-allocated text.
  template <class F>
  py::str text_call(F&& f) {
    char* out = nullptr;
    size_t len = 0;
    call([&](T* p, di_error** err) { return f(p, &out, &len, err); });
    return take_text(out, len);
  }

 private:
  std::shared_mutex mu_;
  T* ptr_ = nullptr;
  const char* what_;
};

}  // namespace di::python
