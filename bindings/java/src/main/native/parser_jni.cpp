// Native methods of ai.deepinfer.Parser. Events come back synchronously on the calling thread
// through on_event, which hands them to EventSink.accept; a Java exception stops delivery and is
// left pending so it surfaces when the native method returns (it never unwinds through C).
#include <cstring>

#include "ai_deepinfer_Parser.h"
#include "jni_util.h"

using namespace di::jni;

namespace {

di_parser* parser(jlong p) { return handle<di_parser>(p); }

struct EventTarget {
  JNIEnv* env;
  jobject sink;
};

void on_event(void* user_data, const char* event, size_t event_len, const char* data, size_t data_len) {
  auto* t = static_cast<EventTarget*>(user_data);
  JNIEnv* env = t->env;
  if (env->ExceptionCheck()) return;  // an earlier event failed: deliver nothing more
  jbyteArray e = new_bytes(env, event, event_len);
  if (e == nullptr) return;
  jbyteArray d = new_bytes(env, data, data_len);
  if (d == nullptr) {
    env->DeleteLocalRef(e);
    return;
  }
  env->CallVoidMethod(t->sink, g_cache.event_sink_accept, e, d);
  if (env->ExceptionCheck()) return;  // left pending for the Java caller
  // One push may deliver many events within one native call: free the references now.
  env->DeleteLocalRef(e);
  env->DeleteLocalRef(d);
}

// Runs a di_parse_* call with the sink wired in; returns its status or throws.
template <class Call>
jint with_sink(JNIEnv* env, jobject sink, Call call) {
  EventTarget target{env, sink};
  Error e;
  const di_status st = call(sink ? on_event : nullptr, sink ? &target : nullptr, &e.err);
  if (env->ExceptionCheck()) return st;  // the listener path failed; that exception wins
  throw_if_error(env, st, e);
  return st;
}

// What both pushes read from Java before the call: text, token ids, error message.
struct PushInput {
  std::string text, error;
  std::vector<int32_t> ids;
  bool read(JNIEnv* env, jbyteArray t, jintArray i, jbyteArray em) {
    return read_bytes(env, t, &text, "text") && read_ints(env, i, &ids, "tokenIds") &&
           read_bytes(env, em, &error, "errorMessage");
  }
  // The fields di_parse_chunk and di_chunk share, zeroing the rest; each caller sets its own.
  template <class Record>
  void fill(Record* c, jint finish, jlong prompt_tokens, jlong cached_prompt_tokens, jlong completion_tokens) const {
    std::memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
    c->text = text.c_str();
    c->text_len = text.size();
    c->token_ids = ids.empty() ? nullptr : ids.data();
    c->finish_reason = finish;
    c->prompt_tokens = prompt_tokens;
    c->cached_prompt_tokens = cached_prompt_tokens;
    c->completion_tokens = completion_tokens;
    c->error_message_len = error.size();
  }
};

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Parser_nCreate(JNIEnv* env, jclass, jbyteArray json) {
  DI_JNI_BEGIN
  return new_handle_from_bytes<di_parser>(env, json, "optionsJson", [&](const std::string& s, di_parser** out, di_error** err) {
    return di_parser_create_from_json(s.data(), s.size(), out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT jlong JNICALL Java_ai_deepinfer_Parser_nCreateForPrepared(JNIEnv* env, jclass, jlong prepared,
                                                                    jbyteArray overrides) {
  DI_JNI_BEGIN
  return new_handle_from_bytes<di_parser>(env, overrides, "overridesJson", [&](const std::string& s, di_parser** out, di_error** err) {
    return di_parser_create(handle<const di_prepared>(prepared), s.empty() ? nullptr : s.data(), s.size(), out, err);
  });
  DI_JNI_END(0)
}

JNIEXPORT void JNICALL Java_ai_deepinfer_Parser_nDestroy(JNIEnv*, jclass, jlong p) { di_parser_destroy(parser(p)); }

JNIEXPORT jint JNICALL Java_ai_deepinfer_Parser_nPush(JNIEnv* env, jclass, jlong p, jbyteArray text, jintArray ids,
                                                      jint finish, jlong prompt_tokens, jlong cached_prompt_tokens,
                                                      jlong completion_tokens, jbyteArray error_message, jobject sink) {
  DI_JNI_BEGIN
  PushInput in;
  if (!in.read(env, text, ids, error_message)) return DI_E_INVALID_ARG;
  di_parse_chunk c;
  in.fill(&c, finish, prompt_tokens, cached_prompt_tokens, completion_tokens);
  c.num_token_ids = in.ids.size();
  c.error_message = in.error.empty() ? nullptr : in.error.data();
  return with_sink(env, sink, [&](di_parse_event_fn fn, void* ud, di_error** err) {
    return di_parse_push(parser(p), &c, fn, ud, err);
  });
  DI_JNI_END(DI_E_INTERNAL)
}

JNIEXPORT jint JNICALL Java_ai_deepinfer_Parser_nPushChunk(JNIEnv* env, jclass, jlong p, jint index, jlong request_id,
                                                           jintArray ids, jbyteArray text, jint finish, jboolean is_final,
                                                           jlong prompt_tokens, jlong cached_prompt_tokens,
                                                           jlong completion_tokens, jbyteArray error_message,
                                                           jobject sink) {
  DI_JNI_BEGIN
  PushInput in;
  if (!in.read(env, text, ids, error_message)) return DI_E_INVALID_ARG;
  // Rebuild the engine's record from the Java copy; di_parse_push_chunk reads it during the call.
  di_chunk c;
  in.fill(&c, finish, prompt_tokens, cached_prompt_tokens, completion_tokens);
  c.index = static_cast<uint32_t>(index);
  c.request_id = static_cast<uint64_t>(request_id);
  c.num_tokens = in.ids.size();
  c.is_final = is_final ? 1 : 0;
  c.error_message = in.error.c_str();
  return with_sink(env, sink, [&](di_parse_event_fn fn, void* ud, di_error** err) {
    return di_parse_push_chunk(parser(p), &c, fn, ud, err);
  });
  DI_JNI_END(DI_E_INTERNAL)
}

JNIEXPORT jint JNICALL Java_ai_deepinfer_Parser_nFinish(JNIEnv* env, jclass, jlong p, jobject sink) {
  DI_JNI_BEGIN
  return with_sink(env, sink, [&](di_parse_event_fn fn, void* ud, di_error** err) {
    return di_parse_finish(parser(p), fn, ud, err);
  });
  DI_JNI_END(DI_E_INTERNAL)
}

JNIEXPORT jbyteArray JNICALL Java_ai_deepinfer_Parser_nResponse(JNIEnv* env, jclass, jlong p) {
  return owned_bytes(env, [&](char** out, size_t* len, di_error** err) { return di_parse_response(parser(p), out, len, err); });
}

}  // extern "C"
