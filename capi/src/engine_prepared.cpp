// di_submit_prepared: the adapter between the recipe and the engine. Reads a di_prepared only
// through its public accessors (token ids, sampling options) and submits it like di_submit.
// Stop strings stay with the output parser (they must not fire inside reasoning or tool markup).
#include <string>

#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "deepinfer.h"

extern "C" {

DI_API di_status di_submit_prepared(di_engine* engine, const di_prepared* prepared,
                                    di_chunk_callback on_chunk, void* user_data, di_request** out,
                                    di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(engine, err);
  DI_REQUIRE_ARG(prepared, err);
  DI_REQUIRE_ARG(out, err);
  size_t count = 0;
  const int32_t* ids = di_prepared_token_ids(prepared, &count);
  if (ids == nullptr || count == 0)
    return di::capi::fail(err, DI_E_INVALID_ARG,
                          "prepared: has no token ids (its recipe was created without a tokenizer)");
  size_t len = 0;
  const char* constraint = di_prepared_constraint_json(prepared, &len);
  const nlohmann::json c = nlohmann::json::parse(std::string(constraint, len), nullptr, false);
  if (!c.is_object() || c.value("type", "") != "none")
    return di::capi::fail(err, DI_E_UNSUPPORTED,
                          "prepared: output constraints (" + std::string(constraint, len) +
                              ") are not enforced by the engine yet");
  const char* images = di_prepared_images_json(prepared, &len);
  const nlohmann::json im = nlohmann::json::parse(std::string(images, len), nullptr, false);
  if (im.is_array() && !im.empty())
    return di::capi::fail(err, DI_E_UNSUPPORTED, "prepared: images need a vision model; this engine has none");
  const char* sampling = di_prepared_sampling_json(prepared, &len);
  di_options* opts = nullptr;
  di_status st = di_options_create(&opts, err);
  if (st != DI_OK) return st;
  st = di_options_update_json(opts, sampling, len, err);
  if (st == DI_OK) st = di_submit(engine, ids, count, opts, on_chunk, user_data, out, err);
  di_options_destroy(opts);
  return st;
  DI_API_END(err)
}

}  // extern "C"
