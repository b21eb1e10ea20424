// Native side of DeepInfer.setLogListener: di_log_set with a callback that attaches the logging
// thread (once, as a daemon) and calls the static DeepInfer.deliverLog, which forwards to the
// listener and keeps every Throwable on the Java side.
#include "ai_deepinfer_DeepInfer.h"
#include "jni_util.h"

using namespace di::jni;

namespace {

// Resolved on a Java thread in nSetLog: a native thread's FindClass sees only system classes.
jclass g_deepinfer = nullptr;
jmethodID g_deliver = nullptr;

void on_log(void*, int32_t level, const char* message, size_t len) {
  JNIEnv* env = attached_env();
  if (env == nullptr || g_deliver == nullptr) return;
  if (env->PushLocalFrame(4) != 0) {
    env->ExceptionClear();
    return;
  }
  jbyteArray bytes = env->NewByteArray(static_cast<jsize>(len));
  if (bytes != nullptr) {
    env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(len), reinterpret_cast<const jbyte*>(message));
    env->CallStaticVoidMethod(g_deepinfer, g_deliver, static_cast<jint>(level), bytes);
  }
  if (env->ExceptionCheck()) env->ExceptionClear();
  env->PopLocalFrame(nullptr);
}

}  // namespace

extern "C" {

JNIEXPORT void JNICALL Java_ai_deepinfer_DeepInfer_nSetLog(JNIEnv* env, jclass cls, jboolean to_listener,
                                                         jint max_level) {
  if (g_deepinfer == nullptr) {
    g_deepinfer = static_cast<jclass>(env->NewGlobalRef(cls));  // kept for the life of the VM
    g_deliver = env->GetStaticMethodID(cls, "deliverLog", "(I[B)V");
    if (g_deliver == nullptr) return;  // NoSuchMethodError is pending
  }
  Error e;
  const di_status st = di_log_set(to_listener ? on_log : nullptr, nullptr, static_cast<int32_t>(max_level), &e.err);
  throw_if_error(env, st, e);
}

}  // extern "C"
