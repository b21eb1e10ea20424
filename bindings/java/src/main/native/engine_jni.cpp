// Native methods of ai.deepinfer.Engine and ai.deepinfer.Request: create/destroy, submit (polled
// or with a listener called on the engine's output thread), poll, cancel, info, metrics.
#include <cstring>

#include "ai_deepinfer_Engine.h"
#include "ai_deepinfer_Request.h"
#include "jni_util.h"

using namespace di::jni;

namespace {

di_engine* eng(jlong p) { return handle<di_engine>(p); }
di_request* req(jlong p) { return handle<di_request>(p); }

// di_chunk_callback for listener requests. Runs on the engine's output thread: attaches it (once),
// copies the chunk into Java inside a local frame (an attached native thread never returns to
// Java, so its local references would otherwise pile up) and calls ChunkSink.accept, which keeps
// every Throwable on the Java side. The sink's global ref is dropped with the final chunk.
void on_chunk(const di_chunk* c, void* user_data) {
  auto sink = static_cast<jobject>(user_data);
  JNIEnv* env = attached_env();
  if (env == nullptr) return;  // the VM is gone or refused the thread: nothing can be delivered
  if (env->PushLocalFrame(16) == 0) {
    jobject chunk = make_chunk(env, *c);
    if (chunk != nullptr) {
      env->CallVoidMethod(sink, g_cache.chunk_sink_accept, chunk);
    } else {
      env->ExceptionClear();
      env->CallVoidMethod(sink, g_cache.chunk_sink_lost, static_cast<jboolean>(c->is_final != 0));
    }
    // ChunkSink catches Throwable; anything left (a StackOverflowError thrown while handling)
    // must still not travel back into the engine.
    if (env->ExceptionCheck()) env->ExceptionClear();
    env->PopLocalFrame(nullptr);
  } else {
    env->ExceptionClear();
  }
  if (c->is_final) env->DeleteGlobalRef(sink);
}

// Shared tail of both submits: a global ref for the listener's sink, the C call, cleanup on error.
template <class Submit>
jlong submit_with(JNIEnv* env, jobject sink, Submit submit) {
  jobject global = nullptr;
  if (sink != nullptr) {
    global = env->NewGlobalRef(sink);
    if (global == nullptr) {
      throw_oom(env);
      return 0;
    }
  }
  Error e;
  di_request* r = nullptr;
  const di_status st = submit(global ? on_chunk : nullptr, global, &r, &e.err);
  if (st < 0) {
    if (global) env->DeleteGlobalRef(global);  // no chunk will ever reach the callback
    throw_if_error(env, st, e);
    return 0;
  }
  return to_jlong(r);
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Engine_nCreate(JNIEnv* env, jclass, jbyteArray dir, jlong options) {
  DI_JNI_BEGIN
  return new_handle_from_bytes<di_engine>(env, dir, "modelDir", [&](const std::string& d, di_engine** out, di_error** err) {
    return di_engine_create(d.data(), d.size(), handle<const di_options>(options), out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Engine_nDestroy(JNIEnv*, jclass, jlong p) { di_engine_destroy(eng(p)); }

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Engine_nSubmit(JNIEnv* env, jclass, jlong p, jintArray ids, jlong sampling,
                                                         jobject sink) {
  DI_JNI_BEGIN
  std::vector<int32_t> v;
  if (!read_ints(env, ids, &v, "promptIds")) return 0;
  return submit_with(env, sink, [&](di_chunk_callback cb, void* ud, di_request** out, di_error** err) {
    return di_submit(eng(p), v.data(), v.size(), handle<const di_options>(sampling), cb, ud, out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Engine_nSubmitPrepared(JNIEnv* env, jclass, jlong p, jlong prepared,
                                                                 jobject sink) {
  DI_JNI_BEGIN
  return submit_with(env, sink, [&](di_chunk_callback cb, void* ud, di_request** out, di_error** err) {
    return di_submit_prepared(eng(p), handle<const di_prepared>(prepared), cb, ud, out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Engine_nInfo(JNIEnv* env, jclass, jlong p) {
  return owned_bytes(env, [&](char** out, size_t* len, di_error** err) { return di_engine_info(eng(p), out, len, err); });
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Engine_nMetrics(JNIEnv* env, jclass, jlong p, jint format) {
  return owned_bytes(env, [&](char** out, size_t* len, di_error** err) {
    return di_engine_metrics(eng(p), format, out, len, err);
  });
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Request_nId(JNIEnv*, jclass, jlong p) {
  return static_cast<jlong>(di_request_id(req(p)));
}

JNIEXPORT jint JNICALL Java_ai_deepinfer_Request_nPoll(JNIEnv* env, jclass, jlong p, jint timeout_ms, jobjectArray out) {
  di_chunk c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  Error e;
  // No JNI critical section or pinned array is held here: the wait may block for timeout_ms.
  const di_status st = di_poll_chunk(req(p), timeout_ms, &c, &e.err);
  if (throw_if_error(env, st, e)) return st;
  if (st != DI_OK) return st;
  jobject chunk = make_chunk(env, c);
  if (chunk == nullptr) return DI_E_OOM;  // exception pending
  env->SetObjectArrayElement(out, 0, chunk);
  return st;
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Request_nCancel(JNIEnv* env, jclass, jlong p) {
  Error e;
  throw_if_error(env, di_cancel(req(p), &e.err), e);
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Request_nDestroy(JNIEnv*, jclass, jlong p) { di_request_destroy(req(p)); }

}  // extern "C"
