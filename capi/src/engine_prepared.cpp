// di_submit_prepared: hands a prepared request's typed engine part (request::EngineRequest:
// sampling parameters and the grammar the recipe chose) and its token ids to the engine, with no
// JSON in between. Stop strings stay with the output parser (they must not fire inside reasoning
// or tool markup).
#include <string>

#include "api_guard.h"
#include "capi/src/engine_handle.h"
#include "capi/src/prepared_handle.h"
#include "deepinfer.h"

extern "C" {

DI_API di_status di_submit_prepared(di_engine* engine, const di_prepared* prepared,
                                    di_chunk_callback on_chunk, void* user_data, di_request** out,
                                    di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(engine, err);
  DI_REQUIRE_ARG(prepared, err);
  DI_REQUIRE_ARG(out, err);
  const di::recipe::Prepared& p = prepared->p;
  if (p.ids.empty())
    return di::capi::fail(err, DI_E_INVALID_ARG,
                          "prepared: has no token ids (its recipe was created without a tokenizer)");
  if (!p.images.empty())
    return di::capi::fail(err, DI_E_UNSUPPORTED, "prepared: images need a vision model; this engine has none");
  return di::capi::submit_request(engine, p.ids, p.engine.sampling, p.engine.constraint, on_chunk, user_data, out,
                                  err);
  DI_API_END(err)
}

}  // extern "C"
