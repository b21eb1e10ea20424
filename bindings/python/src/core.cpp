// Core of the C ABI for Python: versions, status names, the error bridge to deepinfer.errors,
// and di_options as the Options class. Knows nothing of engines or recipes.
#include <cstring>
#include <memory>

#include "bindings/python/src/native.h"

namespace di::python {

void raise_error(di_status status, di_error* err) {
  const di_status code = err ? di_error_code(err) : status;
  std::string message = err ? di_error_message(err) : "";
  std::string detail = err ? di_error_detail(err) : "";
  di_error_destroy(err);
  if (message.empty()) message = di_status_name(code);
  py::object make = py::module_::import("deepinfer.errors").attr("_from_status");
  py::object exc = make(code, di_status_name(code), utf8(message), utf8(detail));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

void raise_closed(const char* what) {
  py::object make = py::module_::import("deepinfer.errors").attr("_from_status");
  py::object exc = make(static_cast<int>(DI_E_STATE), di_status_name(DI_E_STATE),
                        std::string(what) + " is closed", "");
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

py::str utf8(const char* data, size_t len) {
  PyObject* s = PyUnicode_DecodeUTF8(data ? data : "", static_cast<Py_ssize_t>(len), "replace");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::str take_text(char* data, size_t len) {
  std::unique_ptr<char, void (*)(void*)> owned(data, di_free);
  return utf8(data, data ? len : 0);
}

namespace {

// di_options: typed keyed settings. Options objects are cheap and short-lived; the Python layer
// builds one per call from SamplingParams or keyword arguments.
class Options {
 public:
  Options() {
    di_error* err = nullptr;
    check(di_options_create(&ptr_, &err), err);
  }
  explicit Options(di_options* adopted) : ptr_(adopted) {}
  ~Options() { di_options_destroy(ptr_); }
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;

  di_options* get() const {
    if (!ptr_) raise_closed("Options");
    return ptr_;
  }
  void close() { di_options_destroy(ptr_); ptr_ = nullptr; }

  std::unique_ptr<Options> clone() const {
    di_options* out = nullptr;
    di_error* err = nullptr;
    check(di_options_clone(get(), &out, &err), err);
    return std::make_unique<Options>(out);
  }
  void set_i64(const std::string& key, int64_t v) {
    run([&](di_error** err) { return di_options_set_i64(get(), key.c_str(), v, err); });
  }
  void set_f64(const std::string& key, double v) {
    run([&](di_error** err) { return di_options_set_f64(get(), key.c_str(), v, err); });
  }
  void set_str(const std::string& key, const std::string& v) {
    run([&](di_error** err) { return di_options_set_str(get(), key.c_str(), v.data(), v.size(), err); });
  }
  void set_json(const std::string& key, const std::string& json) {
    run([&](di_error** err) {
      return di_options_set_json(get(), key.c_str(), json.data(), json.size(), err);
    });
  }
  void update_json(const std::string& json) {
    run([&](di_error** err) { return di_options_update_json(get(), json.data(), json.size(), err); });
  }
  // Getters return None for a known key that is unset (DI_E_NOT_FOUND), raise otherwise.
  py::object get_i64(const std::string& key) const {
    int64_t v = 0;
    if (!found([&](di_error** err) { return di_options_get_i64(get(), key.c_str(), &v, err); }))
      return py::none();
    return py::int_(v);
  }
  py::object get_f64(const std::string& key) const {
    double v = 0;
    if (!found([&](di_error** err) { return di_options_get_f64(get(), key.c_str(), &v, err); }))
      return py::none();
    return py::float_(v);
  }
  py::object get_str(const std::string& key) const { return get_text(key, di_options_get_str); }
  py::object get_json(const std::string& key) const { return get_text(key, di_options_get_json); }
  py::str to_json() const {
    char* json = nullptr;
    size_t len = 0;
    di_error* err = nullptr;
    check(di_options_to_json(get(), &json, &len, &err), err);
    return take_text(json, len);
  }

 private:
  using TextGetter = di_status (*)(const di_options*, const char*, const char**, size_t*, di_error**);

  // Runs a call that reports failure through a di_error, raising it.
  template <class Call>
  static void run(Call&& call) {
    di_error* err = nullptr;
    check(call(&err), err);
  }
  // As run, but an unset key (DI_E_NOT_FOUND) is not raised: returns false instead.
  template <class Call>
  static bool found(Call&& call) {
    di_error* err = nullptr;
    const di_status st = call(&err);
    if (st == DI_E_NOT_FOUND) { di_error_destroy(err); return false; }
    check(st, err);
    return true;
  }
  py::object get_text(const std::string& key, TextGetter getter) const {
    const char* v = nullptr;
    size_t len = 0;
    if (!found([&](di_error** err) { return getter(get(), key.c_str(), &v, &len, err); })) return py::none();
    return utf8(v, len);
  }

  di_options* ptr_ = nullptr;
};

}  // namespace

di_options* options_ptr(const py::object& o) {
  if (o.is_none()) return nullptr;
  return o.cast<Options&>().get();
}

void bind_core(py::module_& m) {
  m.attr("ABI_VERSION") = DI_ABI_VERSION;
  m.def("abi_version", &di_abi_version, "ABI version of the loaded libdeepinfer");
  m.def("version_string", [] { return std::string(di_version_string()); });
  m.def("build_info", [] { return std::string(di_build_info()); }, "build capabilities as JSON");
  m.def("status_name", [](int32_t s) { return std::string(di_status_name(s)); });
  m.def("options_schema", [] { return std::string(di_options_schema()); },
        "every option key as a JSON array of {key, type, scope, doc}");

  py::class_<Options>(m, "Options", "Typed keyed settings (di_options).")
      .def(py::init<>())
      .def("clone", &Options::clone)
      .def("close", &Options::close)
      .def("set_i64", &Options::set_i64, py::arg("key"), py::arg("value"))
      .def("set_f64", &Options::set_f64, py::arg("key"), py::arg("value"))
      .def("set_str", &Options::set_str, py::arg("key"), py::arg("value"))
      .def("set_json", &Options::set_json, py::arg("key"), py::arg("json"))
      .def("update_json", &Options::update_json, py::arg("json"))
      .def("get_i64", &Options::get_i64, py::arg("key"))
      .def("get_f64", &Options::get_f64, py::arg("key"))
      .def("get_str", &Options::get_str, py::arg("key"))
      .def("get_json", &Options::get_json, py::arg("key"))
      .def("to_json", &Options::to_json);
}

}  // namespace di::python
