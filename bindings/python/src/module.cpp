// The native module deepinfer._native: one class per C ABI object, nothing more. The Python
// package (deepinfer/) adds the idioms: SamplingParams, LLM, iteration, async, event dicts.
#include "bindings/python/src/native.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "Thin bindings of libdeepinfer's C ABI; use the deepinfer package instead.";
  di::python::bind_core(m);
  di::python::bind_tokenizer(m);
  di::python::bind_recipe(m);
  di::python::bind_parser(m);
  di::python::bind_engine(m);
  di::python::bind_log(m);
}
