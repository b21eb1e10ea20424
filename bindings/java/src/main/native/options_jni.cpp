// Native methods of ai.deepinfer.Options: one per di_options_* call. Keys arrive as UTF-8 bytes
// and are made NUL-terminated here, as the C ABI wants option keys.
#include "ai_deepinfer_Options.h"
#include "jni_util.h"

using namespace di::jni;

namespace {
di_options* opts(jlong p) { return handle<di_options>(p); }
}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Options_nCreate(JNIEnv* env, jclass) {
  Error e;
  di_options* o = nullptr;
  if (throw_if_error(env, di_options_create(&o, &e.err), e)) return 0;
  return to_jlong(o);
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Options_nClone(JNIEnv* env, jclass, jlong p) {
  Error e;
  di_options* o = nullptr;
  if (throw_if_error(env, di_options_clone(opts(p), &o, &e.err), e)) return 0;
  return to_jlong(o);
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nDestroy(JNIEnv*, jclass, jlong p) { di_options_destroy(opts(p)); }

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetI64(JNIEnv* env, jclass, jlong p, jbyteArray key, jlong v) {
  DI_JNI_BEGIN
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return;
  Error e;
  throw_if_error(env, di_options_set_i64(opts(p), k.c_str(), v, &e.err), e);
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetF64(JNIEnv* env, jclass, jlong p, jbyteArray key, jdouble v) {
  DI_JNI_BEGIN
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return;
  Error e;
  throw_if_error(env, di_options_set_f64(opts(p), k.c_str(), v, &e.err), e);
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetStr(JNIEnv* env, jclass, jlong p, jbyteArray key,
                                                         jbyteArray value) {
  DI_JNI_BEGIN
  std::string k, v;
  if (!read_bytes(env, key, &k, "key") || !read_bytes(env, value, &v, "value")) return;
  Error e;
  throw_if_error(env, di_options_set_str(opts(p), k.c_str(), v.data(), v.size(), &e.err), e);
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetJson(JNIEnv* env, jclass, jlong p, jbyteArray key,
                                                          jbyteArray json) {
  DI_JNI_BEGIN
  std::string k, v;
  if (!read_bytes(env, key, &k, "key") || !read_bytes(env, json, &v, "json")) return;
  Error e;
  throw_if_error(env, di_options_set_json(opts(p), k.c_str(), v.data(), v.size(), &e.err), e);
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nUpdateJson(JNIEnv* env, jclass, jlong p, jbyteArray json) {
  DI_JNI_BEGIN
  std::string v;
  if (!read_bytes(env, json, &v, "json")) return;
  Error e;
  throw_if_error(env, di_options_update_json(opts(p), v.data(), v.size(), &e.err), e);
  DI_JNI_END()
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Options_nGetI64(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return 0;
  Error e;
  int64_t v = 0;
  if (throw_if_error(env, di_options_get_i64(opts(p), k.c_str(), &v, &e.err), e)) return 0;
  return static_cast<jlong>(v);
  DI_JNI_END(0)
}

JNIEXPORT jdouble JNICALL Java_ai_deepinfer_Options_nGetF64(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return 0;
  Error e;
  double v = 0;
  if (throw_if_error(env, di_options_get_f64(opts(p), k.c_str(), &v, &e.err), e)) return 0;
  return v;
  DI_JNI_END(0)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Options_nGetStr(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return nullptr;
  Error e;
  const char* v = nullptr;
  size_t len = 0;
  if (throw_if_error(env, di_options_get_str(opts(p), k.c_str(), &v, &len, &e.err), e)) return nullptr;
  return new_bytes(env, v, len);
  DI_JNI_END(nullptr)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Options_nGetJson(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return nullptr;
  Error e;
  const char* v = nullptr;
  size_t len = 0;
  if (throw_if_error(env, di_options_get_json(opts(p), k.c_str(), &v, &len, &e.err), e)) return nullptr;
  return new_bytes(env, v, len);
  DI_JNI_END(nullptr)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Options_nToJson(JNIEnv* env, jclass, jlong p) {
  Error e;
  char* json = nullptr;
  size_t len = 0;
  if (throw_if_error(env, di_options_to_json(opts(p), &json, &len, &e.err), e)) return nullptr;
  jbyteArray out = new_bytes(env, json, len);
  di_free(json);
  return out;
}

}  // extern "C"
