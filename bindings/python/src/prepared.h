// Prepared: the Python object over one di_prepared (recipe.cpp binds it, engine.cpp submits
// it). Immutable in C; the handle's lock only keeps close() from freeing it under a reader.
#pragma once

#include "bindings/python/src/handle.h"

namespace di::python {

class Prepared : public Handle<di_prepared, di_prepared_destroy> {
 public:
  explicit Prepared(di_prepared* p) : Handle("Prepared", p) {}
  template <const char* (*Fn)(const di_prepared*, size_t*)>
  py::str text() {
    return with([](di_prepared* p) {
      size_t len = 0;
      const char* s = Fn(p, &len);
      return utf8(s, len);
    });
  }
};

}  // namespace di::python
