// di_engine and di_request for Python. Every wait runs without the GIL in short slices so
// Ctrl-C (PyErr_CheckSignals) and other Python threads keep working; no Python code ever runs
// on an engine thread (requests are polled, never called back). Close is safe against a
// concurrent poll or cancel: a request handle is destroyed only once no call is inside it.
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "bindings/python/src/chunk.h"
#include "bindings/python/src/prepared.h"

namespace di::python {

namespace {

constexpr int32_t kPollSliceMs = 50;  // how long a wait may go without looking at signals

const char* finish_name(int32_t f) {
  switch (f) {
    case DI_FINISH_STOP: return "stop";
    case DI_FINISH_LENGTH: return "length";
    case DI_FINISH_STOP_SEQUENCE: return "stop_sequence";
    case DI_FINISH_CANCELLED: return "cancelled";
    case DI_FINISH_ERROR: return "error";
    default: return nullptr;
  }
}

class Request {
 public:
  explicit Request(di_request* r) : ptr_(r), id_(di_request_id(r)) {}
  ~Request() { di_request_destroy(ptr_); }

  uint64_t id() const { return id_; }

  // One poll of at most timeout_ms (-1 = until something comes, still in signal-checked
  // slices). Returns the chunk, or None on timeout; raises StopIteration at the end.
  py::object poll(int32_t timeout_ms) {
    for (;;) {
      const int32_t slice = (timeout_ms < 0 || timeout_ms > kPollSliceMs) ? kPollSliceMs
                                                                           : timeout_ms;
      ChunkData data;
      di_error* err = nullptr;
      di_status st;
      {
        py::gil_scoped_release nogil;
        st = poll_once(slice, &data, &err);
      }
      if (st == DI_E_STATE && !err) raise_closed("Request");
      check(st, err);
      if (st == DI_OK) return py::cast(std::move(data));
      if (st == DI_END_OF_STREAM) throw py::stop_iteration();
      // DI_TIMEOUT
      if (PyErr_CheckSignals() != 0) {
        cancel();  // the caller gave up waiting; stop spending compute on it
        throw py::error_already_set();
      }
      if (timeout_ms >= 0) {
        timeout_ms -= slice;
        if (timeout_ms <= 0) return py::none();
      }
    }
  }

  // Any thread, any time, also while another thread polls.
  void cancel() {
    py::gil_scoped_release nogil;
    std::shared_lock lock(life_);
    if (ptr_) di_cancel(ptr_, nullptr);
  }

  // Cancels, waits until no other thread is inside a call on the handle, then destroys it.
  void close() {
    py::gil_scoped_release nogil;
    closing_.store(true);
    {
      std::shared_lock lock(life_);
      if (ptr_) di_cancel(ptr_, nullptr);
    }
    std::unique_lock lock(life_);
    di_request_destroy(ptr_);
    ptr_ = nullptr;
  }

  bool closed() const { return closing_.load(); }

 private:
  di_status poll_once(int32_t timeout_ms, ChunkData* out, di_error** err) {
    if (closing_.load()) return DI_E_STATE;
    std::shared_lock lock(life_);
    if (!ptr_) return DI_E_STATE;
    std::lock_guard poller(poll_mu_);  // the C ABI allows one poller per request
    di_chunk c{};
    c.struct_size = sizeof c;
    const di_status st = di_poll_chunk(ptr_, timeout_ms, &c, err);
    if (st == DI_OK) *out = ChunkData::copy(c);
    return st;
  }

  std::shared_mutex life_;  // shared: calls inside the handle; exclusive: destroy
  std::mutex poll_mu_;
  std::atomic<bool> closing_{false};
  di_request* ptr_ = nullptr;
  uint64_t id_ = 0;
};

class Engine : public Handle<di_engine, di_engine_destroy> {
 public:
  Engine(const std::string& model_dir, const py::object& options) : Handle("Engine") {
    create(model_dir, options, di_engine_create);
  }

  std::unique_ptr<Request> submit(const std::vector<int32_t>& ids, const py::object& sampling) {
    di_options* o = options_ptr(sampling);
    di_request* r = nullptr;
    call([&](di_engine* e, di_error** err) {
      return di_submit(e, ids.data(), ids.size(), o, nullptr, nullptr, &r, err);
    });
    return std::make_unique<Request>(r);
  }

  // Holds the prepared request with the GIL (its lock is the reader's), then submits without.
  std::unique_ptr<Request> submit_prepared(Prepared& prepared) {
    di_request* r = nullptr;
    prepared.with([&](di_prepared* p) {
      return call([&](di_engine* e, di_error** err) {
        return di_submit_prepared(e, p, nullptr, nullptr, &r, err);
      });
    });
    return std::make_unique<Request>(r);
  }

  py::str metrics(int32_t format) {
    return text_call([&](di_engine* e, char** out, size_t* len, di_error** err) {
      return di_engine_metrics(e, format, out, len, err);
    });
  }
  py::str info() {
    return text_call([](di_engine* e, char** out, size_t* len, di_error** err) {
      return di_engine_info(e, out, len, err);
    });
  }
};

py::object top_logprobs(const ChunkData& c) {
  if (c.num_top_logprobs == 0) return py::none();
  py::list rows;
  for (size_t i = 0; i < c.token_ids.size(); ++i) {
    py::list row;
    for (size_t k = 0; k < c.num_top_logprobs; ++k) {
      const size_t j = i * c.num_top_logprobs + k;
      row.append(py::make_tuple(c.top_logprob_ids[j], c.top_logprobs[j]));
    }
    rows.append(row);
  }
  return rows;
}

}  // namespace

void bind_engine(py::module_& m) {
  py::class_<ChunkData>(m, "Chunk", "A piece of one completion's output (a copy of di_chunk).")
      .def_readonly("index", &ChunkData::index)
      .def_readonly("request_id", &ChunkData::request_id)
      .def_readonly("token_ids", &ChunkData::token_ids)
      .def_property_readonly("text", [](const ChunkData& c) { return utf8(c.text); })
      .def_property_readonly("logprobs", [](const ChunkData& c) -> py::object {
        if (!c.has_logprobs) return py::none();
        return py::cast(c.logprobs);
      })
      .def_property_readonly("top_logprobs", &top_logprobs,
                             "per token: [(id, logprob)] most likely first, or None")
      .def_property_readonly("finish_reason", [](const ChunkData& c) -> py::object {
        const char* n = finish_name(c.finish_reason);
        return n ? py::object(py::str(n)) : py::object(py::none());
      })
      .def_readonly("finish_code", &ChunkData::finish_reason)
      .def_readonly("is_final", &ChunkData::is_final)
      .def_readonly("prompt_tokens", &ChunkData::prompt_tokens)
      .def_readonly("cached_prompt_tokens", &ChunkData::cached_prompt_tokens)
      .def_readonly("completion_tokens", &ChunkData::completion_tokens)
      .def_property_readonly("error_message",
                             [](const ChunkData& c) { return utf8(c.error_message); })
      .def("__repr__", [](const ChunkData& c) {
        return py::str("Chunk(index={}, text={!r}, token_ids={}, finish_reason={!r})")
            .format(c.index, utf8(c.text), py::cast(c.token_ids),
                    finish_name(c.finish_reason) ? finish_name(c.finish_reason) : "None");
      });

  py::class_<Request>(m, "Request", "One submitted request (di_request); poll it for chunks.")
      .def_property_readonly("id", &Request::id)
      .def("poll", &Request::poll, py::arg("timeout_ms") = -1)
      .def("cancel", &Request::cancel)
      .def("close", &Request::close)
      .def_property_readonly("closed", &Request::closed);

  py::class_<Engine>(m, "Engine", "An inference engine over one model directory (di_engine).")
      .def(py::init<const std::string&, const py::object&>(), py::arg("model_dir"),
           py::arg("options") = py::none())
      .def("close", &Engine::close)
      .def_property_readonly("closed", &Engine::closed)
      .def("submit", &Engine::submit, py::arg("token_ids"), py::arg("sampling") = py::none())
      .def("submit_prepared", &Engine::submit_prepared, py::arg("prepared"))
      .def("metrics", &Engine::metrics, py::arg("format") = 0)
      .def("info", &Engine::info);
}

}  // namespace di::python
