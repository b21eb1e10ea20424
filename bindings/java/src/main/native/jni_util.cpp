// JNI_OnLoad (class and method caches, the thread-detach key) and the helpers of jni_util.h.
#include "jni_util.h"

#include <pthread.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

namespace di::jni {

Cache g_cache;

namespace {

pthread_key_t g_detach_key;

// Runs at the exit of a native thread we attached: leaving it attached would keep its Thread
// object alive forever and make the JVM wait on a dead thread.
void detach_at_thread_exit(void* vm) { static_cast<JavaVM*>(vm)->DetachCurrentThread(); }

jclass global_class(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr || env->ExceptionCheck()) return nullptr;
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

bool throw_class(JNIEnv* env, jclass cls, const char* message) {
  if (env->ExceptionCheck()) return true;
  if (cls == nullptr || env->ThrowNew(cls, message) != 0) env->FatalError("deepinfer_jni: cannot throw");
  return true;
}

}  // namespace

bool throw_if_error(JNIEnv* env, di_status status, const Error& error) {
  if (status >= 0) return false;
  if (env->ExceptionCheck()) return true;
  const char* msg = error.err ? di_error_message(error.err) : di_status_name(status);
  const char* detail = error.err ? di_error_detail(error.err) : "";
  const di_status code = error.err ? di_error_code(error.err) : status;
  jbyteArray m = new_cstring_bytes(env, msg);
  if (m == nullptr) return true;
  jbyteArray d = new_cstring_bytes(env, detail);
  if (d == nullptr) {
    env->DeleteLocalRef(m);
    return true;
  }
  auto ex = static_cast<jthrowable>(env->CallStaticObjectMethod(
      g_cache.exception_class, g_cache.exception_from_native, static_cast<jint>(code), m, d));
  if (env->ExceptionCheck() || ex == nullptr) return true;
  env->DeleteLocalRef(m);
  env->DeleteLocalRef(d);
  // The thrown object's local reference is released when the native method returns.
  if (env->Throw(ex) != 0) env->FatalError("deepinfer_jni: cannot throw DeepInferException");
  return true;
}

void throw_illegal_argument(JNIEnv* env, const char* message) {
  throw_class(env, g_cache.illegal_argument_class, message);
}

void throw_oom(JNIEnv* env) { throw_class(env, g_cache.oom_class, "deepinfer_jni: out of memory"); }

void throw_internal(JNIEnv* env, const char* message) {
  if (env->ExceptionCheck()) return;
  // Runs inside a catch handler: no allocation that could throw again.
  char m[256];
  const int n = std::snprintf(m, sizeof m, "deepinfer_jni: %s", message);
  jbyteArray mb = new_bytes(env, m, n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof m - 1));
  if (mb == nullptr) return;
  jbyteArray d = new_bytes(env, "", 0);
  if (d == nullptr) return;
  auto ex = static_cast<jthrowable>(env->CallStaticObjectMethod(
      g_cache.exception_class, g_cache.exception_from_native, static_cast<jint>(DI_E_INTERNAL), mb, d));
  if (!env->ExceptionCheck() && ex != nullptr) env->Throw(ex);
}

namespace {

// Java array -> C buffer: the Get<Type>ArrayRegion copy behind read_bytes and read_ints.
template <class JArray, class JElem, class Out>
bool read_array(JNIEnv* env, JArray array, Out* out, const char* what,
                void (JNIEnv::*get)(JArray, jsize, jsize, JElem*)) {
  if (array == nullptr) {
    throw_illegal_argument(env, what);
    return false;
  }
  const jsize n = env->GetArrayLength(array);
  out->resize(static_cast<size_t>(n));
  if (n > 0) (env->*get)(array, 0, n, reinterpret_cast<JElem*>(out->data()));
  return !env->ExceptionCheck();
}

// C buffer -> new Java array: the New<Type>Array + Set<Type>ArrayRegion copy behind new_bytes,
// new_ints and new_floats. A length past a Java array's limit is an IllegalArgumentException.
template <class JArray, class JElem, class T>
JArray new_array(JNIEnv* env, const T* data, size_t len, const char* too_long, JArray (JNIEnv::*make)(jsize),
                 void (JNIEnv::*set)(JArray, jsize, jsize, const JElem*)) {
  static_assert(sizeof(T) == sizeof(JElem));
  if (len > static_cast<size_t>(INT_MAX)) {
    throw_illegal_argument(env, too_long);
    return nullptr;
  }
  JArray a = (env->*make)(static_cast<jsize>(len));
  if (a == nullptr || env->ExceptionCheck()) return nullptr;  // OutOfMemoryError pending
  if (len > 0) (env->*set)(a, 0, static_cast<jsize>(len), reinterpret_cast<const JElem*>(data));
  if (env->ExceptionCheck()) {
    env->DeleteLocalRef(a);
    return nullptr;
  }
  return a;
}

}  // namespace

bool read_bytes(JNIEnv* env, jbyteArray array, std::string* out, const char* what) {
  return read_array(env, array, out, what, &JNIEnv::GetByteArrayRegion);
}

bool read_ints(JNIEnv* env, jintArray array, std::vector<int32_t>* out, const char* what) {
  return read_array(env, array, out, what, &JNIEnv::GetIntArrayRegion);
}

jbyteArray new_bytes(JNIEnv* env, const char* data, size_t len) {
  return new_array(env, data, len, "deepinfer_jni: a result over 2 GiB does not fit a Java array",
                   &JNIEnv::NewByteArray, &JNIEnv::SetByteArrayRegion);
}

jbyteArray new_cstring_bytes(JNIEnv* env, const char* s) {
  return s == nullptr ? new_bytes(env, "", 0) : new_bytes(env, s, std::strlen(s));
}

jintArray new_ints(JNIEnv* env, const int32_t* data, size_t len) {
  return new_array(env, data, len, "deepinfer_jni: a result over 2^31 ids does not fit a Java array",
                   &JNIEnv::NewIntArray, &JNIEnv::SetIntArrayRegion);
}

jfloatArray new_floats(JNIEnv* env, const float* data, size_t len) {
  return new_array(env, data, len, "deepinfer_jni: a result over 2^31 floats does not fit a Java array",
                   &JNIEnv::NewFloatArray, &JNIEnv::SetFloatArrayRegion);
}

jobject make_chunk(JNIEnv* env, const di_chunk& c) {
  // Callers run inside a local frame (engine threads) or a native method, so the local
  // references below are released with it.
  jintArray ids = new_ints(env, c.token_ids, c.token_ids ? c.num_tokens : 0);
  if (ids == nullptr) return nullptr;
  jbyteArray text = new_bytes(env, c.text ? c.text : "", c.text ? c.text_len : 0);
  if (text == nullptr) return nullptr;
  jfloatArray logprobs = nullptr;
  if (c.logprobs != nullptr && (logprobs = new_floats(env, c.logprobs, c.num_tokens)) == nullptr) return nullptr;
  jintArray top_ids = nullptr;
  jfloatArray top_lps = nullptr;
  const size_t k = c.num_top_logprobs;
  if (k > 0 && c.top_logprob_ids != nullptr && c.top_logprobs != nullptr) {
    if (c.num_tokens > static_cast<size_t>(INT_MAX) / k) {
      throw_illegal_argument(env, "deepinfer_jni: top logprobs do not fit a Java array");
      return nullptr;
    }
    if ((top_ids = new_ints(env, c.top_logprob_ids, c.num_tokens * k)) == nullptr) return nullptr;
    if ((top_lps = new_floats(env, c.top_logprobs, c.num_tokens * k)) == nullptr) return nullptr;
  }
  jbyteArray error = new_bytes(env, c.error_message ? c.error_message : "", c.error_message ? c.error_message_len : 0);
  if (error == nullptr) return nullptr;
  jobject chunk = env->CallStaticObjectMethod(
      g_cache.chunk_class, g_cache.chunk_from_native, static_cast<jint>(c.index),
      static_cast<jlong>(c.request_id), ids, text, logprobs, top_ids, top_lps,
      static_cast<jint>(top_ids ? k : 0), static_cast<jint>(c.finish_reason),
      static_cast<jboolean>(c.is_final != 0), static_cast<jlong>(c.prompt_tokens),
      static_cast<jlong>(c.cached_prompt_tokens), static_cast<jlong>(c.completion_tokens), error);
  if (env->ExceptionCheck()) return nullptr;
  return chunk;
}

JNIEnv* attached_env() {
  JNIEnv* env = nullptr;
  const jint rc = g_cache.vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8);
  if (rc == JNI_OK) return env;
  if (rc != JNI_EDETACHED) return nullptr;
  JavaVMAttachArgs args;
  args.version = JNI_VERSION_1_8;
  args.name = const_cast<char*>("deepinfer-engine");
  args.group = nullptr;
  // Daemon: an engine thread must never keep the JVM from exiting. Attached once per thread
  // (attaching per callback is slow and creates a new Thread object each time).
  if (g_cache.vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK) return nullptr;
  if (pthread_setspecific(g_detach_key, g_cache.vm) != 0) {
    g_cache.vm->DetachCurrentThread();
    return nullptr;
  }
  return env;
}

}  // namespace di::jni

using di::jni::g_cache;

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  g_cache.vm = vm;
  if (pthread_key_create(&di::jni::g_detach_key, di::jni::detach_at_thread_exit) != 0) return JNI_ERR;
  using di::jni::global_class;
  if (!(g_cache.exception_class = global_class(env, "ai/deepinfer/DeepInferException")) ||
      !(g_cache.chunk_class = global_class(env, "ai/deepinfer/Chunk")) ||
      !(g_cache.chunk_sink_class = global_class(env, "ai/deepinfer/ChunkSink")) ||
      !(g_cache.event_sink_class = global_class(env, "ai/deepinfer/EventSink")) ||
      !(g_cache.oom_class = global_class(env, "java/lang/OutOfMemoryError")) ||
      !(g_cache.illegal_argument_class = global_class(env, "java/lang/IllegalArgumentException")))
    return JNI_ERR;
  g_cache.exception_from_native = env->GetStaticMethodID(
      g_cache.exception_class, "fromNative", "(I[B[B)Lai/deepinfer/DeepInferException;");
  if (!g_cache.exception_from_native || env->ExceptionCheck()) return JNI_ERR;
  g_cache.chunk_from_native = env->GetStaticMethodID(g_cache.chunk_class, "fromNative",
                                                     "(IJ[I[B[F[I[FIIZJJJ[B)Lai/deepinfer/Chunk;");
  if (!g_cache.chunk_from_native || env->ExceptionCheck()) return JNI_ERR;
  g_cache.chunk_sink_accept = env->GetMethodID(g_cache.chunk_sink_class, "accept", "(Lai/deepinfer/Chunk;)V");
  if (!g_cache.chunk_sink_accept || env->ExceptionCheck()) return JNI_ERR;
  g_cache.chunk_sink_lost = env->GetMethodID(g_cache.chunk_sink_class, "lost", "(Z)V");
  if (!g_cache.chunk_sink_lost || env->ExceptionCheck()) return JNI_ERR;
  g_cache.event_sink_accept = env->GetMethodID(g_cache.event_sink_class, "accept", "([B[B)V");
  if (!g_cache.event_sink_accept || env->ExceptionCheck()) return JNI_ERR;
  return JNI_VERSION_1_8;
}
