/* binding_cycles: drives libdeepinfer.so exactly as the Python, Go and Java bindings' glue does,
 * for running under valgrind memcheck (scripts/suites/capi_valgrind.sh): engine create /
 * generate / destroy cycles on the bundled tiny model, poll and callback delivery, cancel from
 * another thread, a request outliving its engine, recipe + parser, errors. Checks results, so a
 * clean valgrind run also means the calls did what they should. C99 on purpose, like a binding.
 * Usage: binding_cycles MODEL_DIR [CYCLES]. Exit 0 when every check passed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepinfer.h"

static int failures = 0;
#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                       \
    }                                                                   \
  } while (0)

/* Like every binding: a failed call's error becomes the language's error, then is destroyed.
 * Takes the error's address: it is read only after the call (argument order is unspecified). */
static int ok(di_status st, di_error** err, const char* what) {
  if (st == DI_OK) return 1;
  fprintf(stderr, "%s: %s (%s)\n", what, *err ? di_error_message(*err) : "no error object", di_status_name(st));
  di_error_destroy(*err);
  *err = NULL;
  ++failures;
  return 0;
}

static di_options* options(const char* json) {
  di_options* o = NULL;
  di_error* err = NULL;
  if (!ok(di_options_create(&o, &err), &err, "di_options_create")) return NULL;
  if (!ok(di_options_update_json(o, json, strlen(json), &err), &err, json)) {
    di_options_destroy(o);
    return NULL;
  }
  return o;
}

static di_request* submit(di_engine* e, const int32_t* ids, size_t n, const char* sampling,
                          di_chunk_callback cb, void* user) {
  di_options* o = options(sampling);
  di_request* r = NULL;
  di_error* err = NULL;
  di_status st = di_submit(e, ids, n, o, cb, user, &r, &err);
  ok(st, &err, "di_submit");
  di_options_destroy(o);
  return r;
}

/* Polls to the end; copies the text and ids out as a binding does. Returns the finish reason. */
static int32_t drain(di_request* r, char* text, size_t text_cap, int32_t* ids, size_t* num_ids) {
  size_t text_len = 0, n = 0;
  int32_t finish = DI_FINISH_NONE;
  for (;;) {
    di_chunk c;
    c.struct_size = sizeof c;
    di_error* err = NULL;
    di_status st = di_poll_chunk(r, 60000, &c, &err);
    if (st == DI_END_OF_STREAM) break;
    if (!ok(st, &err, "di_poll_chunk")) break;
    if (text && text_len + c.text_len < text_cap) {
      memcpy(text + text_len, c.text, c.text_len);
      text_len += c.text_len;
    }
    for (size_t i = 0; ids && i < c.num_tokens && n < 64; ++i) ids[n++] = c.token_ids[i];
    if (c.finish_reason != DI_FINISH_NONE) finish = c.finish_reason;
  }
  if (text) text[text_len] = '\0';
  if (num_ids) *num_ids = n;
  return finish;
}

/* The Go binding's callback path: chunks arrive on the engine's output thread. */
struct callback_state {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int chunks, final;
  int32_t finish;
};

static void on_chunk(const di_chunk* c, void* user) {
  struct callback_state* s = (struct callback_state*)user;
  pthread_mutex_lock(&s->mu);
  ++s->chunks;
  if (c->finish_reason != DI_FINISH_NONE) s->finish = c->finish_reason;
  if (c->is_final) s->final = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void* poll_to_end(void* r) {
  static int32_t finish;
  finish = drain((di_request*)r, NULL, 0, NULL, NULL);
  return &finish;
}

static void on_event(void* user, const char* event, size_t event_len, const char* data, size_t data_len) {
  (void)event;
  (void)event_len;
  (void)data;
  *(size_t*)user += data_len;
}

/* Far longer than any of the checks below takes (the engines' max_model_len is 2048). */
static const char kLong[] = "{\"max_tokens\": 2000, \"ignore_eos\": 1, \"temperature\": 0}";

static void engine_cycle(const char* dir, const di_tokenizer* tok, const int32_t* prompt, size_t n) {
  di_options* eo = options("{\"max_num_seqs\": 2, \"max_model_len\": 2048}");
  di_engine* e = NULL;
  di_error* err = NULL;
  int created = ok(di_engine_create(dir, strlen(dir), eo, &e, &err), &err, "di_engine_create");
  di_options_destroy(eo);
  if (!created) return;

  /* Generate two tokens; the streamed text equals the tokenizer's decode of the ids. */
  di_request* r = submit(e, prompt, n, "{\"max_tokens\": 2, \"ignore_eos\": 1, \"temperature\": 0}", NULL, NULL);
  char text[1024];
  int32_t ids[64];
  size_t num = 0;
  CHECK(drain(r, text, sizeof text, ids, &num) == DI_FINISH_LENGTH);
  CHECK(num == 2);
  di_request_destroy(r);
  char* decoded = NULL;
  size_t len = 0;
  if (ok(di_tokenizer_decode(tok, ids, num, DI_DECODE_SKIP_SPECIAL, &decoded, &len, &err), &err, "decode"))
    CHECK(strcmp(decoded, text) == 0);
  di_free(decoded);

  /* Left unfinished: destroying the handle cancels and frees it. */
  r = submit(e, prompt, n, kLong, NULL, NULL);
  di_chunk c;
  c.struct_size = sizeof c;
  CHECK(di_poll_chunk(r, 60000, &c, NULL) == DI_OK);
  di_request_destroy(r);

  /* Callback delivery, cancelled from this thread once chunks flow. */
  struct callback_state s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, DI_FINISH_NONE};
  r = submit(e, prompt, n, kLong, on_chunk, &s);
  pthread_mutex_lock(&s.mu);
  while (s.chunks == 0) pthread_cond_wait(&s.cv, &s.mu);
  pthread_mutex_unlock(&s.mu);
  CHECK(di_cancel(r, NULL) == DI_OK);
  pthread_mutex_lock(&s.mu);
  while (!s.final) pthread_cond_wait(&s.cv, &s.mu);
  pthread_mutex_unlock(&s.mu);
  CHECK(s.finish == DI_FINISH_CANCELLED);
  di_request_destroy(r);

  /* Cancel from another thread while this one's poller waits (Java's close-from-another-thread). */
  r = submit(e, prompt, n, kLong, NULL, NULL);
  CHECK(di_poll_chunk(r, 60000, &c, NULL) == DI_OK);
  pthread_t poller;
  pthread_create(&poller, NULL, poll_to_end, r);
  CHECK(di_cancel(r, NULL) == DI_OK);
  void* finish = NULL;
  pthread_join(poller, &finish);
  CHECK(*(int32_t*)finish == DI_FINISH_CANCELLED);
  di_request_destroy(r);

  char* info = NULL;
  if (ok(di_engine_info(e, &info, NULL, &err), &err, "di_engine_info")) CHECK(strstr(info, "vocab_size") != NULL);
  di_free(info);
  char* metrics = NULL;
  if (ok(di_engine_metrics(e, 1, &metrics, NULL, &err), &err, "di_engine_metrics")) CHECK(strstr(metrics, "# TYPE") != NULL);
  di_free(metrics);

  /* A request outlives its engine: the destroy cancels it, the handle stays valid. */
  r = submit(e, prompt, n, kLong, NULL, NULL);
  di_engine_destroy(e);
  CHECK(drain(r, NULL, 0, NULL, NULL) == DI_FINISH_CANCELLED);
  di_request_destroy(r);
}

static void recipe_cycle(const char* dir, di_engine* e) {
  di_recipe* rec = NULL;
  di_error* err = NULL;
  if (!ok(di_recipe_create(dir, strlen(dir), NULL, &rec, &err), &err, "di_recipe_create")) return;
  const char body[] = "{\"model\": \"deepseek-chat\", \"max_tokens\": 3, \"stream\": true, "
                      "\"messages\": [{\"role\": \"user\", \"content\": \"Say hi \\ud83d\\ude00\"}]}";
  di_prepared* p = NULL;
  if (ok(di_recipe_prepare(rec, DI_PROTOCOL_CHAT_COMPLETIONS, body, strlen(body), &p, &err), &err, "prepare")) {
    di_parser* parser = NULL;
    di_request* r = NULL;
    if (ok(di_parser_create(p, NULL, 0, &parser, &err), &err, "di_parser_create") &&
        ok(di_submit_prepared(e, p, NULL, NULL, &r, &err), &err, "di_submit_prepared")) {
      size_t events = 0;
      for (;;) {
        di_chunk c;
        c.struct_size = sizeof c;
        di_status st = di_poll_chunk(r, 60000, &c, NULL);
        if (st != DI_OK) {
          CHECK(st == DI_END_OF_STREAM);
          break;
        }
        /* DI_END_OF_STREAM: the chunk with the finish reason delivered the terminal event. */
        st = di_parse_push_chunk(parser, &c, on_event, &events, &err);
        if (st != DI_END_OF_STREAM) ok(st, &err, "di_parse_push_chunk");
      }
      CHECK(events > 0);
      char* json = NULL;
      size_t len = 0;
      if (ok(di_parse_response(parser, &json, &len, &err), &err, "di_parse_response"))
        CHECK(strstr(json, "chat.completion") != NULL);
      di_free(json);
    }
    di_request_destroy(r);
    di_parser_destroy(parser);
    di_prepared_destroy(p);
  }
  /* A bad request: the error names the field; the binding frees it. */
  const char bad[] = "{\"model\": \"deepseek-chat\", \"messages\": 5}";
  CHECK(di_recipe_prepare(rec, DI_PROTOCOL_CHAT_COMPLETIONS, bad, strlen(bad), &p, &err) != DI_OK);
  CHECK(err && strstr(di_error_message(err), "messages") != NULL);
  di_error_destroy(err);
  di_recipe_destroy(rec);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL_DIR [CYCLES]\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  const int cycles = argc > 2 ? atoi(argv[2]) : 3;
  di_tokenizer* tok = NULL;
  di_error* err = NULL;
  if (!ok(di_tokenizer_create(dir, strlen(dir), &tok, &err), &err, "di_tokenizer_create")) return 1;
  int32_t* prompt = NULL;
  size_t n = 0;
  const char hello[] = "Leak check \xF0\x9F\x98\x80";
  if (!ok(di_tokenizer_encode(tok, hello, strlen(hello), DI_TOKENIZE_ADD_SPECIAL, &prompt, &n, &err), &err, "encode"))
    return 1;

  for (int i = 0; i < cycles; ++i) engine_cycle(dir, tok, prompt, n);

  di_engine* e = NULL;
  di_options* eo = options("{\"max_num_seqs\": 2, \"max_model_len\": 256}");
  int created = ok(di_engine_create(dir, strlen(dir), eo, &e, &err), &err, "di_engine_create");
  di_options_destroy(eo);
  if (created) {
    recipe_cycle(dir, e);
    di_engine_destroy(e);
  }

  /* Errors the bindings map to exceptions: a missing model, a bad option value. */
  CHECK(di_engine_create("/nonexistent", 12, NULL, &e, &err) != DI_OK);
  CHECK(err && di_error_message(err)[0] != '\0');
  di_error_destroy(err);
  err = NULL;
  di_options* o = NULL;
  CHECK(di_options_create(&o, NULL) == DI_OK);
  CHECK(di_options_set_f64(o, "top_p", 2.0, &err) != DI_OK || di_submit(NULL, prompt, n, o, NULL, NULL, NULL, &err) != DI_OK);
  di_error_destroy(err);
  di_options_destroy(o);

  di_free(prompt);
  di_tokenizer_destroy(tok);
  printf("binding_cycles: %d engine cycles, %d failed checks\n", cycles, failures);
  return failures == 0 ? 0 : 1;
}
