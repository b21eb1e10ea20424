// di_tokenizer for Python: encode / decode / segments / pieces. Immutable after creation, so
// calls run without the GIL and from any thread; close() must not race other calls (the
// Python object is then unusable).
#include <pybind11/stl.h>

#include <memory>
#include <tuple>
#include <vector>

#include "bindings/python/src/handle.h"

namespace di::python {
namespace {

class Tokenizer : public Handle<di_tokenizer, di_tokenizer_destroy> {
 public:
  explicit Tokenizer(const std::string& path) : Handle("Tokenizer") {
    create([&](di_tokenizer** out, di_error** err) {
      return di_tokenizer_create(path.data(), path.size(), out, err);
    });
  }

  std::vector<int32_t> encode(const std::string& text, bool added_tokens, bool add_special) {
    const uint32_t flags = (added_tokens ? DI_TOKENIZE_ADDED_TOKENS : 0u) |
                           (add_special ? DI_TOKENIZE_ADD_SPECIAL : 0u);
    int32_t* ids = nullptr;
    size_t n = 0;
    call([&](di_tokenizer* t, di_error** err) {
      return di_tokenizer_encode(t, text.data(), text.size(), flags, &ids, &n, err);
    });
    std::vector<int32_t> out(ids, ids + n);
    di_free(ids);
    return out;
  }

  // segments: [(text, is_template)]; returns (ids, [(begin, end)]) where the ranges are the ids
  // that came from template segments (the only ones that may be control tokens).
  std::tuple<std::vector<int32_t>, std::vector<std::pair<uint32_t, uint32_t>>> encode_segments(
      const std::vector<std::pair<std::string, bool>>& segments) {
    std::vector<const char*> texts;
    std::vector<size_t> lens;
    std::vector<uint8_t> special;
    for (const auto& [t, s] : segments) {
      texts.push_back(t.data());
      lens.push_back(t.size());
      special.push_back(s ? 1 : 0);
    }
    int32_t* ids = nullptr;
    size_t n = 0;
    uint32_t* ranges = nullptr;
    size_t nr = 0;
    call([&](di_tokenizer* t, di_error** err) {
      return di_tokenizer_encode_segments(t, texts.data(), lens.data(), special.data(),
                                          texts.size(), &ids, &n, &ranges, &nr, err);
    });
    std::vector<int32_t> out(ids, ids + n);
    std::vector<std::pair<uint32_t, uint32_t>> rs;
    for (size_t i = 0; i < nr; ++i) rs.emplace_back(ranges[2 * i], ranges[2 * i + 1]);
    di_free(ids);
    di_free(ranges);
    return {std::move(out), std::move(rs)};
  }

  py::str decode(const std::vector<int32_t>& ids, bool skip_special) {
    return text_call([&](di_tokenizer* t, char** text, size_t* len, di_error** err) {
      return di_tokenizer_decode(t, ids.data(), ids.size(),
                                 skip_special ? DI_DECODE_SKIP_SPECIAL : 0u, text, len, err);
    });
  }

  // The raw bytes of one token: possibly part of a UTF-8 character, hence bytes, not str.
  py::bytes token_to_piece(int32_t id) {
    return with([&](di_tokenizer* t) {
      char* bytes = nullptr;
      size_t len = 0;
      di_error* err = nullptr;
      check(di_tokenizer_token_to_piece(t, id, &bytes, &len, &err), err);
      py::bytes out(bytes, len);
      di_free(bytes);
      return out;
    });
  }

  // None when the spelling is not a token.
  py::object token_id(const std::string& token) {
    return with([&](di_tokenizer* t) -> py::object {
      int32_t id = -1;
      di_error* err = nullptr;
      const di_status st = di_tokenizer_token_id(t, token.data(), token.size(), &id, &err);
      if (st == DI_E_NOT_FOUND) { di_error_destroy(err); return py::none(); }
      check(st, err);
      return py::int_(id);
    });
  }

  int64_t vocab_size() {
    return with([](di_tokenizer* t) { return di_tokenizer_vocab_size(t); });
  }

  // {"bos_id": int|None, "eos_id": int|None, "add_bos_token": bool}
  py::dict special_ids() {
    int32_t bos = -1, eos = -1, add_bos = 0;
    with([&](di_tokenizer* t) {
      di_error* err = nullptr;
      return check(di_tokenizer_special_ids(t, &bos, &eos, &add_bos, &err), err);
    });
    py::dict d;
    d["bos_id"] = bos < 0 ? py::object(py::none()) : py::object(py::int_(bos));
    d["eos_id"] = eos < 0 ? py::object(py::none()) : py::object(py::int_(eos));
    d["add_bos_token"] = add_bos != 0;
    return d;
  }
};

}  // namespace

void bind_tokenizer(py::module_& m) {
  py::class_<Tokenizer>(m, "Tokenizer",
                        "A tokenizer.json byte-level BPE tokenizer (a model directory or the file).")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("close", &Tokenizer::close)
      .def("encode", &Tokenizer::encode, py::arg("text"), py::kw_only(),
           py::arg("added_tokens") = true, py::arg("add_special") = false,
           "token ids of `text`; added_tokens=False encodes control-token spellings as text")
      .def("encode_segments", &Tokenizer::encode_segments, py::arg("segments"))
      .def("decode", &Tokenizer::decode, py::arg("ids"), py::kw_only(),
           py::arg("skip_special") = false)
      .def("token_to_piece", &Tokenizer::token_to_piece, py::arg("id"))
      .def("token_id", &Tokenizer::token_id, py::arg("token"))
      .def_property_readonly("vocab_size", &Tokenizer::vocab_size)
      .def_property_readonly("special_ids", &Tokenizer::special_ids);
}

}  // namespace di::python
