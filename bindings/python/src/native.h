// Shared pieces of the native module deepinfer._native: turning a di_status + di_error into the
// Python exception of deepinfer.errors, and UTF-8 text out of the library. Holds no state of
// its own; each bind_*() function registers one C ABI area.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "deepinfer.h"

namespace di::python {

namespace py = pybind11;

// Raises deepinfer.errors' class for `status` (status, status name, message, JSON detail) and
// releases `err`. Needs the GIL.
[[noreturn]] void raise_error(di_status status, di_error* err);

// Returns `status` when it is not an error; otherwise raises (and always releases `err`).
// `err` is taken by reference so that check(f(&err), err) reads it after f ran: function
// arguments are evaluated in an unspecified order.
inline di_status check(di_status status, di_error*& err) {
  di_error* e = err;
  err = nullptr;
  if (status < 0) raise_error(status, e);
  di_error_destroy(e);
  return status;
}

// Raises deepinfer.errors.StateError (DI_E_STATE) with `message`: a closed handle.
[[noreturn]] void raise_closed(const char* what);

// Library text is UTF-8; anything else (never expected) becomes U+FFFD instead of an exception
// in the middle of a stream.
py::str utf8(const char* data, size_t len);
inline py::str utf8(std::string_view s) { return utf8(s.data(), s.size()); }

// Copies a library-allocated buffer into a Python str and releases it with di_free.
py::str take_text(char* data, size_t len);

// The di_options of an Options object, or NULL for None (engine, recipe and submit calls).
di_options* options_ptr(const py::object& options);

void bind_core(py::module_& m);
void bind_tokenizer(py::module_& m);
void bind_recipe(py::module_& m);
void bind_parser(py::module_& m);
void bind_engine(py::module_& m);
void bind_log(py::module_& m);

}  // namespace di::python
