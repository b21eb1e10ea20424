// Native methods of ai.deepinfer.Tokenizer: one per di_tokenizer_* call; results the library
// allocates are copied into Java arrays and released with di_free at once.
#include "ai_deepinfer_Tokenizer.h"
#include "jni_util.h"

using namespace di::jni;

namespace {
const di_tokenizer* tok(jlong p) { return handle<const di_tokenizer>(p); }
}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Tokenizer_nCreate(JNIEnv* env, jclass, jbyteArray path) {
  DI_JNI_BEGIN
  return new_handle_from_bytes<di_tokenizer>(env, path, "path", [&](const std::string& s, di_tokenizer** out, di_error** err) {
    return di_tokenizer_create(s.data(), s.size(), out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Tokenizer_nDestroy(JNIEnv*, jclass, jlong p) {
  di_tokenizer_destroy(handle<di_tokenizer>(p));
}

JNIEXPORT jintArray JNICALL Java_ai_deepinfer_Tokenizer_nEncode(JNIEnv* env, jclass, jlong p, jbyteArray text,
                                                                jint flags) {
  DI_JNI_BEGIN
  std::string s;
  if (!read_bytes(env, text, &s, "text")) return nullptr;
  Error e;
  int32_t* ids = nullptr;
  size_t n = 0;
  if (throw_if_error(env, di_tokenizer_encode(tok(p), s.data(), s.size(), static_cast<uint32_t>(flags), &ids, &n, &e.err), e))
    return nullptr;
  jintArray out = new_ints(env, ids, n);
  di_free(ids);
  return out;
  DI_JNI_END(nullptr)
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Tokenizer_nEncodeSegments(JNIEnv* env, jclass, jlong p, jobjectArray texts,
                                                                   jbooleanArray special, jobjectArray out) {
  DI_JNI_BEGIN
  if (texts == nullptr || special == nullptr || out == nullptr) return throw_illegal_argument(env, "segments");
  const jsize n = env->GetArrayLength(texts);
  if (env->GetArrayLength(special) != n) return throw_illegal_argument(env, "segments: lengths differ");
  std::vector<std::string> segs(static_cast<size_t>(n));
  std::vector<const char*> ptrs(static_cast<size_t>(n));
  std::vector<size_t> lens(static_cast<size_t>(n));
  std::vector<jboolean> flags(static_cast<size_t>(n));
  std::vector<uint8_t> spec(static_cast<size_t>(n));
  if (n > 0) env->GetBooleanArrayRegion(special, 0, n, flags.data());
  if (env->ExceptionCheck()) return;
  for (jsize i = 0; i < n; ++i) {
    auto a = static_cast<jbyteArray>(env->GetObjectArrayElement(texts, i));
    if (env->ExceptionCheck()) return;
    const bool ok = read_bytes(env, a, &segs[static_cast<size_t>(i)], "segments[i].text");
    env->DeleteLocalRef(a);
    if (!ok) return;
    ptrs[static_cast<size_t>(i)] = segs[static_cast<size_t>(i)].data();
    lens[static_cast<size_t>(i)] = segs[static_cast<size_t>(i)].size();
    spec[static_cast<size_t>(i)] = flags[static_cast<size_t>(i)] ? 1 : 0;
  }
  Error e;
  int32_t* ids = nullptr;
  size_t num_ids = 0;
  uint32_t* ranges = nullptr;
  size_t num_ranges = 0;
  if (throw_if_error(env, di_tokenizer_encode_segments(tok(p), ptrs.data(), lens.data(), spec.data(), static_cast<size_t>(n),
                                                       &ids, &num_ids, &ranges, &num_ranges, &e.err), e))
    return;
  jintArray jids = new_ints(env, ids, num_ids);
  di_free(ids);
  // Range bounds are id positions, far below 2^31 for any prompt that fit in memory.
  jintArray jranges = jids ? new_ints(env, reinterpret_cast<const int32_t*>(ranges), 2 * num_ranges) : nullptr;
  di_free(ranges);
  if (jids == nullptr || jranges == nullptr) return;
  env->SetObjectArrayElement(out, 0, jids);
  if (env->ExceptionCheck()) return;
  env->SetObjectArrayElement(out, 1, jranges);
  DI_JNI_END()
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Tokenizer_nDecode(JNIEnv* env, jclass, jlong p, jintArray ids,
                                                                 jint flags) {
  DI_JNI_BEGIN
  std::vector<int32_t> v;
  if (!read_ints(env, ids, &v, "ids")) return nullptr;
  return owned_bytes(env, [&](char** out, size_t* len, di_error** err) {
    return di_tokenizer_decode(tok(p), v.data(), v.size(), static_cast<uint32_t>(flags), out, len, err);
  });
  DI_JNI_END(nullptr)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Tokenizer_nTokenToPiece(JNIEnv* env, jclass, jlong p, jint id) {
  return owned_bytes(env, [&](char** out, size_t* len, di_error** err) {
    return di_tokenizer_token_to_piece(tok(p), id, out, len, err);
  });
}

JNIEXPORT jint JNICALL Java_ai_deepinfer_Tokenizer_nTokenId(JNIEnv* env, jclass, jlong p, jbyteArray token) {
  DI_JNI_BEGIN
  std::string s;
  if (!read_bytes(env, token, &s, "token")) return -1;
  Error e;
  int32_t id = -1;
  if (throw_if_error(env, di_tokenizer_token_id(tok(p), s.data(), s.size(), &id, &e.err), e)) return -1;
  return id;
  DI_JNI_END(-1)
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Tokenizer_nVocabSize(JNIEnv*, jclass, jlong p) {
  return static_cast<jlong>(di_tokenizer_vocab_size(tok(p)));
}

JNIEXPORT jintArray JNICALL Java_ai_deepinfer_Tokenizer_nSpecialIds(JNIEnv* env, jclass, jlong p) {
  Error e;
  int32_t v[3] = {-1, -1, 0};
  if (throw_if_error(env, di_tokenizer_special_ids(tok(p), &v[0], &v[1], &v[2], &e.err), e)) return nullptr;
  return new_ints(env, v, 3);
}

}  // extern "C"
