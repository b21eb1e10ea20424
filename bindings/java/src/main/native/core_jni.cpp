// Native methods of ai.deepinfer.DeepInfer: versions, build info, option schema, status names.
#include "ai_deepinfer_DeepInfer.h"
#include "jni_util.h"

using namespace di::jni;

extern "C" {

JNIEXPORT jint JNICALL Java_ai_deepinfer_DeepInfer_nAbiVersion(JNIEnv*, jclass) {
  return static_cast<jint>(di_abi_version());
}

JNIEXPORT jint JNICALL Java_ai_deepinfer_DeepInfer_nHeaderAbiVersion(JNIEnv*, jclass) {
  return DI_ABI_VERSION;
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_DeepInfer_nVersionString(JNIEnv* env, jclass) {
  return new_cstring_bytes(env, di_version_string());
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_DeepInfer_nBuildInfo(JNIEnv* env, jclass) {
  return new_cstring_bytes(env, di_build_info());
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_DeepInfer_nOptionsSchema(JNIEnv* env, jclass) {
  return new_cstring_bytes(env, di_options_schema());
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_DeepInfer_nStatusName(JNIEnv* env, jclass, jint code) {
  return new_cstring_bytes(env, di_status_name(static_cast<di_status>(code)));
}

}  // extern "C"
