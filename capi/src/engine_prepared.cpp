// di_submit_prepared: the adapter between the recipe and the engine. Reads a di_prepared only
// through its public accessors (token ids, sampling options, constraint, parser options) and
// submits it like di_submit, with the grammar its response_format and strict tools call for.
// Stop strings stay with the output parser (they must not fire inside reasoning or tool markup).
#include <string>

#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "capi/src/engine_constraint.h"
#include "capi/src/engine_handle.h"
#include "capi/src/engine_options.h"
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
  const char* images = di_prepared_images_json(prepared, &len);
  const nlohmann::json im = nlohmann::json::parse(std::string(images, len), nullptr, false);
  if (im.is_array() && !im.empty())
    return di::capi::fail(err, DI_E_UNSUPPORTED, "prepared: images need a vision model; this engine has none");
  const char* sampling = di_prepared_sampling_json(prepared, &len);
  di_options* opts = nullptr;
  di_status st = di_options_create(&opts, err);
  if (st != DI_OK) return st;
  std::unique_ptr<di_options, void (*)(di_options*)> hold(opts, di_options_destroy);
  st = di_options_update_json(opts, sampling, len, err);
  if (st != DI_OK) return st;
  auto params = di::capi::sampling_from_options(opts);
  if (!params.is_ok()) return di::capi::fail(err, params.status());
  auto spec = di::capi::constraint_from_prepared(prepared);
  if (!spec.is_ok()) return di::capi::fail(err, spec.status());
  std::unique_ptr<di::engine::TokenConstraint> constraint;
  if (*spec) {
    auto c = engine->grammars->make(**spec);
    if (!c.is_ok()) return di::capi::fail(err, c.status());
    constraint = std::move(c).value();
  }
  return di::capi::submit_request(engine, std::vector<int32_t>(ids, ids + count), std::move(params).value(),
                                  on_chunk, user_data, std::move(constraint), out, err);
  DI_API_END(err)
}

}  // extern "C"
