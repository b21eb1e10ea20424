// di_recipe and di_prepared for Python: API request bodies in, prompts, ids and the JSON facts
// the engine and the parser need out. Both objects are immutable, so calls run without the GIL.
// JSON stays text here; deepinfer/recipe.py turns it into dicts.
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "bindings/python/src/native.h"
#include "bindings/python/src/prepared.h"

namespace di::python {

namespace {

class Recipe : public Handle<di_recipe, di_recipe_destroy> {
 public:
  Recipe(const std::string& tokenizer_path, const py::object& options) : Handle("Recipe") {
    create(tokenizer_path, options, di_recipe_create);
  }

  std::unique_ptr<Prepared> prepare(int32_t protocol, const std::string& body) {
    di_prepared* out = nullptr;
    call([&](di_recipe* r, di_error** err) {
      return di_recipe_prepare(r, protocol, body.data(), body.size(), &out, err);
    });
    return std::make_unique<Prepared>(out);
  }
};

}  // namespace

void bind_recipe(py::module_& m) {
  m.attr("PROTOCOL_CHAT_COMPLETIONS") = static_cast<int>(DI_PROTOCOL_CHAT_COMPLETIONS);
  m.attr("PROTOCOL_RESPONSES") = static_cast<int>(DI_PROTOCOL_RESPONSES);
  m.attr("PROTOCOL_MESSAGES") = static_cast<int>(DI_PROTOCOL_MESSAGES);

  py::class_<Prepared>(m, "Prepared", "One prepared API request (di_prepared); immutable.")
      .def("close", &Prepared::close)
      .def_property_readonly("prompt", &Prepared::text<di_prepared_prompt>)
      .def_property_readonly("sampling_json", &Prepared::text<di_prepared_sampling_json>)
      .def_property_readonly("stop_sequences_json",
                             &Prepared::text<di_prepared_stop_sequences_json>)
      .def_property_readonly("constraint_json", &Prepared::text<di_prepared_constraint_json>)
      .def_property_readonly("parser_options_json",
                             &Prepared::text<di_prepared_parser_options_json>)
      .def_property_readonly("images_json", &Prepared::text<di_prepared_images_json>)
      .def_property_readonly("info_json", &Prepared::text<di_prepared_info_json>)
      .def("image_data", [](Prepared& p, size_t index) -> py::object {
        return p.with([&](di_prepared* h) -> py::object {
          size_t len = 0;
          const uint8_t* data = di_prepared_image_data(h, index, &len);
          if (data == nullptr) return py::none();
          return py::bytes(reinterpret_cast<const char*>(data), len);
        });
      }, py::arg("index"))
      .def_property_readonly("stream", [](Prepared& p) {
        return p.with([](di_prepared* h) { return di_prepared_stream(h) != 0; });
      })
      .def_property_readonly("token_ids", [](Prepared& p) {
        return p.with([](di_prepared* h) {
          size_t n = 0;
          const int32_t* ids = di_prepared_token_ids(h, &n);
          return std::vector<int32_t>(ids, ids + n);
        });
      })
      .def_property_readonly("special_ranges", [](Prepared& p) {
        return p.with([](di_prepared* h) {
          size_t n = 0;
          const uint32_t* r = di_prepared_special_ranges(h, &n);
          std::vector<std::pair<uint32_t, uint32_t>> out;
          for (size_t i = 0; i < n; ++i) out.emplace_back(r[2 * i], r[2 * i + 1]);
          return out;
        });
      });

  py::class_<Recipe>(m, "Recipe", "How API requests become DeepSeek prompts (di_recipe).")
      .def(py::init<const std::string&, const py::object&>(), py::arg("tokenizer_path"),
           py::arg("options") = py::none())
      .def("close", &Recipe::close)
      .def("prepare", &Recipe::prepare, py::arg("protocol"), py::arg("body"));
}

}  // namespace di::python
