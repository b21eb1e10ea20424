// di_parser for Python: model output in, protocol events out. The C callback only appends to a
// vector during the call (no Python on that path), so pushes run without the GIL; the events
// become (event, data) tuples afterwards. One stream per parser, as in C: calls are serialized.
#include <pybind11/stl.h>

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "bindings/python/src/chunk.h"
#include "bindings/python/src/prepared.h"

namespace di::python {
namespace {

using Events = std::vector<std::pair<std::string, std::string>>;

extern "C" void collect_event(void* user_data, const char* event, size_t event_len,
                              const char* data, size_t data_len) {
  static_cast<Events*>(user_data)->emplace_back(std::string(event, event_len),
                                                std::string(data, data_len));
}

class Parser : public Handle<di_parser, di_parser_destroy> {
 public:
  explicit Parser(const std::string& options_json) : Handle("Parser") {
    create([&](di_parser** out, di_error** err) {
      return di_parser_create_from_json(options_json.data(), options_json.size(), out, err);
    });
  }
  // di_parser_create: configured from a prepared request; `overrides_json` may be "".
  Parser(Prepared& prepared, const std::string& overrides_json) : Handle("Parser") {
    prepared.with([&](di_prepared* p) {
      create([&](di_parser** out, di_error** err) {
        return di_parser_create(p, overrides_json.data(), overrides_json.size(), out, err);
      });
      return 0;
    });
  }

  py::list push(const std::string& text, const std::vector<int32_t>& token_ids,
                int32_t finish_reason, int64_t prompt_tokens, int64_t cached_prompt_tokens,
                int64_t completion_tokens, const std::string& error_message) {
    di_parse_chunk c{};
    c.struct_size = sizeof c;
    c.text = text.data();
    c.text_len = text.size();
    c.token_ids = token_ids.data();
    c.num_token_ids = token_ids.size();
    c.finish_reason = finish_reason;
    c.prompt_tokens = prompt_tokens;
    c.cached_prompt_tokens = cached_prompt_tokens;
    c.completion_tokens = completion_tokens;
    c.error_message = error_message.data();
    c.error_message_len = error_message.size();
    return run([&](di_parser* p, Events* ev, di_error** err) {
      return di_parse_push(p, &c, collect_event, ev, err);
    });
  }

  py::list push_chunk(const ChunkData& chunk) {
    const di_chunk c = chunk.view();
    return run([&](di_parser* p, Events* ev, di_error** err) {
      return di_parse_push_chunk(p, &c, collect_event, ev, err);
    });
  }

  py::list finish() {
    return run([](di_parser* p, Events* ev, di_error** err) {
      return di_parse_finish(p, collect_event, ev, err);
    });
  }

  // The non-streaming response body as JSON text.
  py::str response() {
    return text_call([&](di_parser* p, char** json, size_t* len, di_error** err) {
      std::lock_guard serial(serial_);
      return di_parse_response(p, json, len, err);
    });
  }

  bool ended() const { return ended_; }

 private:
  template <class F>
  py::list run(F&& fn) {
    Events events;
    const di_status st = call([&](di_parser* p, di_error** err) {
      std::lock_guard serial(serial_);
      return fn(p, &events, err);
    });
    if (st == DI_END_OF_STREAM) ended_ = true;
    py::list out;
    for (auto& [event, data] : events) {
      out.append(py::make_tuple(event.empty() ? py::object(py::none()) : py::object(utf8(event)),
                                utf8(data)));
    }
    return out;
  }

  std::mutex serial_;  // one stream per parser: pushes never interleave
  bool ended_ = false;
};

}  // namespace

void bind_parser(py::module_& m) {
  py::class_<Parser>(m, "Parser", "Model output -> API events (di_parser); one stream each.")
      .def(py::init<const std::string&>(), py::arg("options_json"))
      .def(py::init<Prepared&, const std::string&>(), py::arg("prepared"),
           py::arg("overrides_json") = "")
      .def("close", &Parser::close)
      .def("push", &Parser::push, py::arg("text"), py::arg("token_ids"), py::arg("finish_reason"),
           py::arg("prompt_tokens"), py::arg("cached_prompt_tokens"),
           py::arg("completion_tokens"), py::arg("error_message"))
      .def("push_chunk", &Parser::push_chunk, py::arg("chunk"))
      .def("finish", &Parser::finish)
      .def("response", &Parser::response)
      .def_property_readonly("ended", &Parser::ended);
}

}  // namespace di::python
