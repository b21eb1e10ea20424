// The C ABI's tokenizer section: create/destroy, encode (plain, with added tokens, segmented),
// decode, token lookups. Thin wrappers over di::recipe::Tokenizer; all memory handed out is
// malloc'ed so the caller releases it with di_free.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api_guard.h"
#include "recipe/tokenizer/tokenizer_cache.h"
#include "tokenizer_handle.h"

namespace {

using di::capi::fail;

template <class T>
T* copy_out(const T* data, size_t n, size_t extra = 0) {
  void* p = std::malloc((n + extra) * sizeof(T) + (n + extra == 0 ? 1 : 0));
  if (!p) throw std::bad_alloc();
  if (n) std::memcpy(p, data, n * sizeof(T));
  return static_cast<T*>(p);
}

char* copy_string(const std::string& s) {
  char* p = copy_out(s.data(), s.size(), 1);
  p[s.size()] = '\0';
  return p;
}

}  // namespace

extern "C" {

DI_API di_status di_tokenizer_create(const char* path, size_t path_len, di_tokenizer** out,
                                     di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(path, err);
  DI_REQUIRE_ARG(out, err);
  auto t = di::recipe::load_shared_tokenizer(std::string(path, path_len));
  if (!t.is_ok()) return fail(err, t.status());
  *out = new di_tokenizer{std::move(*t)};
  return DI_OK;
  DI_API_END(err)
}

DI_API void di_tokenizer_destroy(di_tokenizer* tokenizer) { delete tokenizer; }

DI_API di_status di_tokenizer_encode(const di_tokenizer* tokenizer, const char* text, size_t len,
                                     uint32_t flags, int32_t** ids, size_t* num_ids,
                                     di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(tokenizer, err);
  DI_REQUIRE_ARG(ids, err);
  DI_REQUIRE_ARG(num_ids, err);
  if (!text && len) return fail(err, DI_E_INVALID_ARG, "text: must not be NULL when len > 0");
  if (flags & ~(DI_TOKENIZE_ADDED_TOKENS | DI_TOKENIZE_ADD_SPECIAL))
    return fail(err, DI_E_INVALID_ARG, "flags: unknown bits " + std::to_string(flags));
  di::recipe::EncodeOptions options;
  options.recognize_added_tokens = flags & DI_TOKENIZE_ADDED_TOKENS;
  options.add_special_tokens = flags & DI_TOKENIZE_ADD_SPECIAL;
  auto r = tokenizer->tokenizer->encode(std::string_view(text ? text : "", len), options);
  if (!r.is_ok()) return fail(err, r.status());
  *ids = copy_out(r->data(), r->size());
  *num_ids = r->size();
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_tokenizer_encode_segments(const di_tokenizer* tokenizer,
                                              const char* const* texts, const size_t* lens,
                                              const uint8_t* special, size_t num_segments,
                                              int32_t** ids, size_t* num_ids,
                                              uint32_t** special_ranges, size_t* num_ranges,
                                              di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(tokenizer, err);
  DI_REQUIRE_ARG(ids, err);
  DI_REQUIRE_ARG(num_ids, err);
  DI_REQUIRE_ARG(special_ranges, err);
  DI_REQUIRE_ARG(num_ranges, err);
  if (num_segments && (!texts || !lens || !special))
    return fail(err, DI_E_INVALID_ARG, "texts, lens, special: must not be NULL when num_segments > 0");
  std::vector<di::recipe::Segment> segs(num_segments);
  for (size_t i = 0; i < num_segments; ++i) {
    if (!texts[i] && lens[i])
      return fail(err, DI_E_INVALID_ARG, "texts[" + std::to_string(i) + "]: must not be NULL when lens[i] > 0");
    segs[i] = {std::string_view(texts[i] ? texts[i] : "", lens[i]), special[i] != 0};
  }
  auto r = tokenizer->tokenizer->encode_segments(segs);
  if (!r.is_ok()) return fail(err, r.status());
  std::vector<uint32_t> flat;
  flat.reserve(r->special_ranges.size() * 2);
  for (const auto& range : r->special_ranges) {
    flat.push_back(range.begin);
    flat.push_back(range.end);
  }
  int32_t* id_copy = copy_out(r->ids.data(), r->ids.size());
  uint32_t* range_copy;
  try {
    range_copy = copy_out(flat.data(), flat.size());
  } catch (...) {
    std::free(id_copy);
    throw;
  }
  *ids = id_copy;
  *num_ids = r->ids.size();
  *special_ranges = range_copy;
  *num_ranges = r->special_ranges.size();
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_tokenizer_decode(const di_tokenizer* tokenizer, const int32_t* ids,
                                     size_t num_ids, uint32_t flags, char** text, size_t* len,
                                     di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(tokenizer, err);
  DI_REQUIRE_ARG(text, err);
  if (!ids && num_ids) return fail(err, DI_E_INVALID_ARG, "ids: must not be NULL when num_ids > 0");
  if (flags & ~DI_DECODE_SKIP_SPECIAL)
    return fail(err, DI_E_INVALID_ARG, "flags: unknown bits " + std::to_string(flags));
  auto r = tokenizer->tokenizer->decode(std::span<const int32_t>(ids, num_ids),
                                        (flags & DI_DECODE_SKIP_SPECIAL) != 0);
  if (!r.is_ok()) return fail(err, r.status());
  *text = copy_string(*r);
  if (len) *len = r->size();
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_tokenizer_token_to_piece(const di_tokenizer* tokenizer, int32_t id,
                                             char** bytes, size_t* len, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(tokenizer, err);
  DI_REQUIRE_ARG(bytes, err);
  DI_REQUIRE_ARG(len, err);
  auto r = tokenizer->tokenizer->token_bytes(id);
  if (!r.is_ok()) return fail(err, r.status());
  *bytes = copy_string(*r);
  *len = r->size();
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_tokenizer_token_id(const di_tokenizer* tokenizer, const char* token,
                                       size_t len, int32_t* id, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(tokenizer, err);
  DI_REQUIRE_ARG(id, err);
  if (!token && len) return fail(err, DI_E_INVALID_ARG, "token: must not be NULL when len > 0");
  const std::string_view t(token ? token : "", len);
  auto found = tokenizer->tokenizer->token_to_id(t);
  if (!found) return fail(err, DI_E_NOT_FOUND, "token \"" + std::string(t) + "\" is not in the vocabulary");
  *id = *found;
  return DI_OK;
  DI_API_END(err)
}

DI_API int64_t di_tokenizer_vocab_size(const di_tokenizer* tokenizer) {
  return tokenizer ? tokenizer->tokenizer->vocab_size() : -1;
}

DI_API di_status di_tokenizer_special_ids(const di_tokenizer* tokenizer, int32_t* bos_id,
                                          int32_t* eos_id, int32_t* add_bos_token,
                                          di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(tokenizer, err);
  const auto& t = *tokenizer->tokenizer;
  if (bos_id) *bos_id = t.bos_id().value_or(-1);
  if (eos_id) *eos_id = t.eos_id().value_or(-1);
  if (add_bos_token) *add_bos_token = t.add_bos_token() ? 1 : 0;
  return DI_OK;
  DI_API_END(err)
}

}  // extern "C"
