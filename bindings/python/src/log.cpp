// di_log_set for Python: the library's records go to one Python callable, called with
// (level: int, message: str) on whichever thread logged, with the GIL held. deepinfer/log.py
// builds the `logging` integration on top.
#include "bindings/python/src/native.h"

namespace di::python {
namespace {

// Owned here for the life of the process: the library may log from an engine thread at any time
// while a handler is installed.
py::object* g_handler = nullptr;

void deliver(void*, int32_t level, const char* message, size_t len) {
  if (_Py_IsFinalizing()) return;  // Python 3.11 spells it with an underscore
  py::gil_scoped_acquire gil;
  if (g_handler == nullptr || g_handler->is_none()) return;
  try {
    (*g_handler)(level, utf8(message, len));
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("deepinfer log handler");
  }
}

}  // namespace

void bind_log(py::module_& m) {
  m.attr("LOG_ERROR") = DI_LOG_ERROR;
  m.attr("LOG_WARN") = DI_LOG_WARN;
  m.attr("LOG_INFO") = DI_LOG_INFO;
  m.attr("LOG_DEBUG") = DI_LOG_DEBUG;
  m.def(
      "set_log_handler",
      [](py::object handler, int32_t max_level) {
        if (!handler.is_none() && !PyCallable_Check(handler.ptr()))
          throw py::type_error("set_log_handler: expected a callable or None");
        if (g_handler == nullptr) g_handler = new py::object();
        di_error* err = nullptr;
        // Install the sink first so a refused level leaves the old handler in place.
        di_status st;
        {
          py::gil_scoped_release release;  // a record in flight on another thread needs the GIL
          st = di_log_set(handler.is_none() ? nullptr : deliver, nullptr, max_level, &err);
        }
        check(st, err);
        *g_handler = handler;
      },
      py::arg("handler"), py::arg("max_level") = DI_LOG_INFO,
      "Sends libdeepinfer's log records to handler(level, message), or to stderr when None.");
}

}  // namespace di::python
