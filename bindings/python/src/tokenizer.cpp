// di_tokenizer for Python: encode / decode / segments / pieces. Immutable after creation, so
// calls run without the GIL and from any thread; close() must not race other calls (the
// Python object is then unusable).
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <vector>

#include "bindings/python/src/native.h"

namespace di::python {
namespace {

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& path) {
    di_error* err = nullptr;
    di_status st;
    {
      py::gil_scoped_release nogil;
      st = di_tokenizer_create(path.data(), path.size(), &ptr_, &err);
    }
    check(st, err);
  }
  ~Tokenizer() { di_tokenizer_destroy(ptr_); }

  void close() {
    py::gil_scoped_release nogil;
    std::unique_lock lock(mu_);
    di_tokenizer_destroy(ptr_);
    ptr_ = nullptr;
  }

  std::vector<int32_t> encode(const std::string& text, bool added_tokens, bool add_special) {
    const uint32_t flags = (added_tokens ? DI_TOKENIZE_ADDED_TOKENS : 0u) |
                           (add_special ? DI_TOKENIZE_ADD_SPECIAL : 0u);
    int32_t* ids = nullptr;
    size_t n = 0;
    di_error* err = nullptr;
    di_status st;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      st = ptr_ ? di_tokenizer_encode(ptr_, text.data(), text.size(), flags, &ids, &n, &err)
                : DI_E_STATE;
    }
    if (st == DI_E_STATE && !err) raise_closed("Tokenizer");
    check(st, err);
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
    di_error* err = nullptr;
    di_status st;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      st = ptr_ ? di_tokenizer_encode_segments(ptr_, texts.data(), lens.data(), special.data(),
                                               texts.size(), &ids, &n, &ranges, &nr, &err)
                : DI_E_STATE;
    }
    if (st == DI_E_STATE && !err) raise_closed("Tokenizer");
    check(st, err);
    std::vector<int32_t> out(ids, ids + n);
    std::vector<std::pair<uint32_t, uint32_t>> rs;
    for (size_t i = 0; i < nr; ++i) rs.emplace_back(ranges[2 * i], ranges[2 * i + 1]);
    di_free(ids);
    di_free(ranges);
    return {std::move(out), std::move(rs)};
  }

  py::str decode(const std::vector<int32_t>& ids, bool skip_special) {
    char* text = nullptr;
    size_t len = 0;
    di_error* err = nullptr;
    di_status st;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      st = ptr_ ? di_tokenizer_decode(ptr_, ids.data(), ids.size(),
                                      skip_special ? DI_DECODE_SKIP_SPECIAL : 0u, &text, &len, &err)
                : DI_E_STATE;
    }
    if (st == DI_E_STATE && !err) raise_closed("Tokenizer");
    check(st, err);
    return take_text(text, len);
  }

  // The raw bytes of one token: possibly part of a UTF-8 character, hence bytes, not str.
  py::bytes token_to_piece(int32_t id) {
    char* bytes = nullptr;
    size_t len = 0;
    di_error* err = nullptr;
    std::shared_lock lock(mu_);
    if (!ptr_) raise_closed("Tokenizer");
    check(di_tokenizer_token_to_piece(ptr_, id, &bytes, &len, &err), err);
    py::bytes out(bytes, len);
    di_free(bytes);
    return out;
  }

  // None when the spelling is not a token.
  py::object token_id(const std::string& token) {
    int32_t id = -1;
    di_error* err = nullptr;
    std::shared_lock lock(mu_);
    if (!ptr_) raise_closed("Tokenizer");
    const di_status st = di_tokenizer_token_id(ptr_, token.data(), token.size(), &id, &err);
    if (st == DI_E_NOT_FOUND) { di_error_destroy(err); return py::none(); }
    check(st, err);
    return py::int_(id);
  }

  int64_t vocab_size() {
    std::shared_lock lock(mu_);
    if (!ptr_) raise_closed("Tokenizer");
    return di_tokenizer_vocab_size(ptr_);
  }

  // {"bos_id": int|None, "eos_id": int|None, "add_bos_token": bool}
  py::dict special_ids() {
    int32_t bos = -1, eos = -1, add_bos = 0;
    di_error* err = nullptr;
    std::shared_lock lock(mu_);
    if (!ptr_) raise_closed("Tokenizer");
    check(di_tokenizer_special_ids(ptr_, &bos, &eos, &add_bos, &err), err);
    py::dict d;
    d["bos_id"] = bos < 0 ? py::object(py::none()) : py::object(py::int_(bos));
    d["eos_id"] = eos < 0 ? py::object(py::none()) : py::object(py::int_(eos));
    d["add_bos_token"] = add_bos != 0;
    return d;
  }

 private:
  std::shared_mutex mu_;  // calls share it; close() takes it alone
  di_tokenizer* ptr_ = nullptr;
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
