// Native methods of ai.deepinfer.Recipe and ai.deepinfer.Prepared: create, prepare, and the
// prepared request's accessors (copied out; the C object owns the originals).
#include "ai_deepinfer_Prepared.h"
#include "ai_deepinfer_Recipe.h"
#include "jni_util.h"

using namespace di::jni;

namespace {
const di_prepared* prep(jlong p) { return handle<const di_prepared>(p); }
}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Recipe_nCreate(JNIEnv* env, jclass, jbyteArray path, jlong options) {
  DI_JNI_BEGIN
  return new_handle_from_bytes<di_recipe>(env, path, "tokenizer", [&](const std::string& s, di_recipe** out, di_error** err) {
    return di_recipe_create(s.data(), s.size(), handle<const di_options>(options), out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Recipe_nDestroy(JNIEnv*, jclass, jlong p) {
  di_recipe_destroy(handle<di_recipe>(p));
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Recipe_nPrepare(JNIEnv* env, jclass, jlong p, jint protocol, jbyteArray json) {
  DI_JNI_BEGIN
  return new_handle_from_bytes<di_prepared>(env, json, "json", [&](const std::string& body, di_prepared** out, di_error** err) {
    return di_recipe_prepare(handle<const di_recipe>(p), protocol, body.data(), body.size(), out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Prepared_nDestroy(JNIEnv*, jclass, jlong p) {
  di_prepared_destroy(handle<di_prepared>(p));
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Prepared_nText(JNIEnv* env, jclass, jlong p, jint which) {
  size_t len = 0;
  const char* s = nullptr;
  switch (which) {
    case 0: s = di_prepared_prompt(prep(p), &len); break;
    case 1: s = di_prepared_sampling_json(prep(p), &len); break;
    case 2: s = di_prepared_stop_sequences_json(prep(p), &len); break;
    case 3: s = di_prepared_constraint_json(prep(p), &len); break;
    case 4: s = di_prepared_parser_options_json(prep(p), &len); break;
    case 5: s = di_prepared_images_json(prep(p), &len); break;
    case 6: s = di_prepared_info_json(prep(p), &len); break;
    default: throw_illegal_argument(env, "Prepared: unknown text field"); return nullptr;
  }
  return new_bytes(env, s, s ? len : 0);
}

JNIEXPORT jintArray JNICALL Java_ai_deepinfer_Prepared_nTokenIds(JNIEnv* env, jclass, jlong p) {
  size_t n = 0;
  const int32_t* ids = di_prepared_token_ids(prep(p), &n);
  if (ids == nullptr) return nullptr;  // a recipe without a tokenizer
  return new_ints(env, ids, n);
}

JNIEXPORT jintArray JNICALL Java_ai_deepinfer_Prepared_nSpecialRanges(JNIEnv* env, jclass, jlong p) {
  size_t n = 0;
  const uint32_t* r = di_prepared_special_ranges(prep(p), &n);
  return new_ints(env, reinterpret_cast<const int32_t*>(r), r ? 2 * n : 0);
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Prepared_nImageData(JNIEnv* env, jclass, jlong p, jint index) {
  size_t len = 0;
  const uint8_t* data = di_prepared_image_data(prep(p), static_cast<size_t>(index), &len);
  if (data == nullptr) return nullptr;  // no such image
  return new_bytes(env, reinterpret_cast<const char*>(data), len);
}

JNIEXPORT jint JNICALL Java_ai_deepinfer_Prepared_nStream(JNIEnv*, jclass, jlong p) { return di_prepared_stream(prep(p)); }

}  // extern "C"
