// Native methods of ai.deepinfer.Options: one per di_options_* call. Keys arrive as UTF-8 bytes
// and are made NUL-terminated here, as the C ABI wants option keys.
#include "ai_deepinfer_Options.h"
#include "jni_util.h"

using namespace di::jni;

namespace {

di_options* opts(jlong p) { return handle<di_options>(p); }

// Every keyed call: the key read (an IllegalArgumentException naming "key" when null), then
// `call(key, &err)`; false with the Java exception pending when either fails.
template <class Call>
bool keyed(JNIEnv* env, jbyteArray key, Call call) {
  std::string k;
  if (!read_bytes(env, key, &k, "key")) return false;
  Error e;
  return !throw_if_error(env, call(k.c_str(), &e.err), e);
}

// di_options_set_str and di_options_set_json: a (ptr, len) value under a key.
using SetText = di_status (*)(di_options*, const char*, const char*, size_t, di_error**);
void set_text(JNIEnv* env, jlong p, jbyteArray key, jbyteArray value, const char* what, SetText set) {
  std::string v;
  keyed(env, key, [&](const char* k, di_error** err) -> di_status {
    // Read after the key so a null key is reported first; a pending exception wins over the status.
    if (!read_bytes(env, value, &v, what)) return DI_E_INVALID_ARG;
    return set(opts(p), k, v.data(), v.size(), err);
  });
}

// di_options_get_i64 and di_options_get_f64: a scalar under a key (0 after a thrown error).
template <class T>
T get_scalar(JNIEnv* env, jlong p, jbyteArray key, di_status (*get)(const di_options*, const char*, T*, di_error**)) {
  T v = 0;
  if (!keyed(env, key, [&](const char* k, di_error** err) { return get(opts(p), k, &v, err); })) return 0;
  return v;
}

// di_options_get_str and di_options_get_json: text borrowed from the options, copied to Java.
using GetText = di_status (*)(const di_options*, const char*, const char**, size_t*, di_error**);
jbyteArray get_text(JNIEnv* env, jlong p, jbyteArray key, GetText get) {
  const char* v = nullptr;
  size_t len = 0;
  if (!keyed(env, key, [&](const char* k, di_error** err) { return get(opts(p), k, &v, &len, err); })) return nullptr;
  return new_bytes(env, v, len);
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Options_nCreate(JNIEnv* env, jclass) {
  return new_handle<di_options>(env, [](di_options** out, di_error** err) { return di_options_create(out, err); });
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Options_nClone(JNIEnv* env, jclass, jlong p) {
  return new_handle<di_options>(env, [&](di_options** out, di_error** err) { return di_options_clone(opts(p), out, err); });
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nDestroy(JNIEnv*, jclass, jlong p) { di_options_destroy(opts(p)); }

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetI64(JNIEnv* env, jclass, jlong p, jbyteArray key, jlong v) {
  DI_JNI_BEGIN
  keyed(env, key, [&](const char* k, di_error** err) { return di_options_set_i64(opts(p), k, v, err); });
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetF64(JNIEnv* env, jclass, jlong p, jbyteArray key, jdouble v) {
  DI_JNI_BEGIN
  keyed(env, key, [&](const char* k, di_error** err) { return di_options_set_f64(opts(p), k, v, err); });
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetStr(JNIEnv* env, jclass, jlong p, jbyteArray key,
                                                         jbyteArray value) {
  DI_JNI_BEGIN
  set_text(env, p, key, value, "value", di_options_set_str);
  DI_JNI_END()
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Options_nSetJson(JNIEnv* env, jclass, jlong p, jbyteArray key,
                                                          jbyteArray json) {
  DI_JNI_BEGIN
  set_text(env, p, key, json, "json", di_options_set_json);
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
  return static_cast<jlong>(get_scalar<int64_t>(env, p, key, di_options_get_i64));
  DI_JNI_END(0)
}

JNIEXPORT jdouble JNICALL Java_ai_deepinfer_Options_nGetF64(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  return get_scalar<double>(env, p, key, di_options_get_f64);
  DI_JNI_END(0)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Options_nGetStr(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  return get_text(env, p, key, di_options_get_str);
  DI_JNI_END(nullptr)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Options_nGetJson(JNIEnv* env, jclass, jlong p, jbyteArray key) {
  DI_JNI_BEGIN
  return get_text(env, p, key, di_options_get_json);
  DI_JNI_END(nullptr)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Options_nToJson(JNIEnv* env, jclass, jlong p) {
  return owned_bytes(env, [&](char** out, size_t* len, di_error** err) { return di_options_to_json(opts(p), out, len, err); });
}

}  // extern "C"
