// JNI plumbing shared by every binding file: the classes and method ids cached at load, turning
// a di_status + di_error into a thrown DeepInferException, byte/int array copies, and the
// engine-thread attach. No di_ call beyond errors and di_free lives here.
#pragma once

#include <jni.h>

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "deepinfer.h"

namespace di::jni {

// Looked up once in JNI_OnLoad (an engine thread's FindClass would see the system class loader,
// not ours) and kept as global refs for the life of the library.
struct Cache {
  JavaVM* vm = nullptr;
  jclass exception_class = nullptr;
  jmethodID exception_from_native = nullptr;  // DeepInferException.fromNative(int, byte[], byte[])
  jclass chunk_class = nullptr;
  jmethodID chunk_from_native = nullptr;      // Chunk.fromNative(...)
  jclass chunk_sink_class = nullptr;
  jmethodID chunk_sink_accept = nullptr;      // ChunkSink.accept(Chunk)
  jmethodID chunk_sink_lost = nullptr;        // ChunkSink.lost(boolean)
  jclass event_sink_class = nullptr;
  jmethodID event_sink_accept = nullptr;      // EventSink.accept(byte[], byte[])
  jclass oom_class = nullptr;                 // java.lang.OutOfMemoryError
  jclass illegal_argument_class = nullptr;    // java.lang.IllegalArgumentException
};
extern Cache g_cache;

// Owns the di_error a call may produce.
struct Error {
  di_error* err = nullptr;
  Error() = default;
  Error(const Error&) = delete;
  Error& operator=(const Error&) = delete;
  ~Error() { di_error_destroy(err); }
};

// For a negative status: throws DeepInferException(status, message, detail) and returns true.
// Does nothing (returns true) when a Java exception is already pending.
bool throw_if_error(JNIEnv* env, di_status status, const Error& error);

// Binding-side failures (sizes a Java array cannot hold, a bad argument caught before C).
void throw_illegal_argument(JNIEnv* env, const char* message);
void throw_oom(JNIEnv* env);
void throw_internal(JNIEnv* env, const char* message);

// Java arrays <-> C buffers. Each returns false / nullptr with a Java exception pending.
bool read_bytes(JNIEnv* env, jbyteArray array, std::string* out, const char* what);
bool read_ints(JNIEnv* env, jintArray array, std::vector<int32_t>* out, const char* what);
jbyteArray new_bytes(JNIEnv* env, const char* data, size_t len);
jbyteArray new_cstring_bytes(JNIEnv* env, const char* s);  // NULL reads as ""
jintArray new_ints(JNIEnv* env, const int32_t* data, size_t len);
jfloatArray new_floats(JNIEnv* env, const float* data, size_t len);

// A Java Chunk holding copies of everything `c` borrows; nullptr with an exception pending.
jobject make_chunk(JNIEnv* env, const di_chunk& c);

// The JNIEnv of the calling native thread, attaching it as a daemon thread on first use; the
// thread detaches itself when it exits (a pthread key destructor). nullptr if attach failed.
JNIEnv* attached_env();

template <class T>
T* handle(jlong p) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(p));
}
template <class T>
jlong to_jlong(T* p) {
  return static_cast<jlong>(reinterpret_cast<intptr_t>(p));
}

// The two shapes most native methods share. `create(&out, &err)` makes a new handle: returns it
// as a jlong, or 0 with the error thrown. `call(&out, &len, &err)` returns a library-allocated
// byte string: copied into a Java byte[] and released with di_free at once (nullptr, thrown, on
// error).
template <class T, class Create>
jlong new_handle(JNIEnv* env, Create create) {
  Error e;
  T* out = nullptr;
  if (throw_if_error(env, create(&out, &e.err), e)) return 0;
  return to_jlong(out);
}

// new_handle for the many constructors whose one input is a Java byte[]: `create(bytes, &out,
// &err)` sees the copied bytes; 0 with the exception pending when the array cannot be read.
template <class T, class Create>
jlong new_handle_from_bytes(JNIEnv* env, jbyteArray array, const char* what, Create create) {
  std::string bytes;
  if (!read_bytes(env, array, &bytes, what)) return 0;
  return new_handle<T>(env, [&](T** out, di_error** err) { return create(bytes, out, err); });
}

template <class Call>
jbyteArray owned_bytes(JNIEnv* env, Call call) {
  Error e;
  char* out = nullptr;
  size_t len = 0;
  if (throw_if_error(env, call(&out, &len, &e.err), e)) return nullptr;
  jbyteArray a = new_bytes(env, out, len);
  di_free(out);
  return a;
}

}  // namespace di::jni

// Every JNI entry point: no C++ exception may unwind into the JVM.
#define DI_JNI_BEGIN try {
#define DI_JNI_END(ret)                                        \
  }                                                            \
  catch (const std::bad_alloc&) {                              \
    di::jni::throw_oom(env);                                   \
    return ret;                                                \
  }                                                            \
  catch (...) {                                                \
    di::jni::throw_internal(env, "unexpected C++ exception");  \
    return ret;                                                \
  }
