/* generate.c: a greedy generation through libdeepinfer in plain C99, the way a program that
 * installed DeepInfer (pkg-config deepinfer, or find_package(DeepInfer)) embeds it. Prints the
 * streamed text and, on its last line, "engine: " + di_engine_info so a caller can see which
 * device ran it.
 * usage: generate MODEL_DIR [PROMPT [MAX_TOKENS]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepinfer.h"

static int report(const char* what, di_status st, di_error* err) {
  fprintf(stderr, "%s: %s: %s\n", what, di_status_name(st), err ? di_error_message(err) : "");
  di_error_destroy(err);
  return 1;
}

int main(int argc, char** argv) {
  const char* model = argc > 1 ? argv[1] : NULL;
  const char* prompt = argc > 2 ? argv[2] : "The capital of France is";
  const long max_tokens = argc > 3 ? strtol(argv[3], NULL, 10) : 16;
  di_error* err = NULL;
  di_engine* engine = NULL;
  di_tokenizer* tok = NULL;
  di_options* sampling = NULL;
  di_request* req = NULL;
  int32_t* ids = NULL;
  size_t num_ids = 0;
  char* info = NULL;
  di_status st;
  int rc = 1;

  if (!model) {
    fprintf(stderr, "usage: generate MODEL_DIR [PROMPT [MAX_TOKENS]]\n");
    return 2;
  }
  if ((st = di_tokenizer_create(model, strlen(model), &tok, &err)) != DI_OK) return report("tokenizer", st, err);
  if ((st = di_engine_create(model, strlen(model), NULL, &engine, &err)) != DI_OK) {
    rc = report("engine", st, err);
    goto done;
  }
  if ((st = di_tokenizer_encode(tok, prompt, strlen(prompt), DI_TOKENIZE_ADDED_TOKENS, &ids, &num_ids, &err)) != DI_OK ||
      (st = di_options_create(&sampling, &err)) != DI_OK ||
      (st = di_options_set_f64(sampling, "temperature", 0.0, &err)) != DI_OK ||
      (st = di_options_set_i64(sampling, "max_tokens", max_tokens, &err)) != DI_OK ||
      (st = di_submit(engine, ids, num_ids, sampling, NULL, NULL, &req, &err)) != DI_OK) {
    rc = report("submit", st, err);
    goto done;
  }
  for (;;) {
    di_chunk chunk;
    memset(&chunk, 0, sizeof chunk);
    chunk.struct_size = sizeof chunk;
    st = di_poll_chunk(req, -1, &chunk, &err);
    if (st == DI_END_OF_STREAM) break;
    if (st != DI_OK) {
      rc = report("poll", st, err);
      goto done;
    }
    fwrite(chunk.text, 1, chunk.text_len, stdout);
    if (chunk.finish_reason == DI_FINISH_ERROR) {
      fprintf(stderr, "generation failed: %.*s\n", (int)chunk.error_message_len, chunk.error_message);
      goto done;
    }
  }
  if ((st = di_engine_info(engine, &info, NULL, &err)) != DI_OK) {
    rc = report("info", st, err);
    goto done;
  }
  printf("\nengine: %s\n", info);
  rc = 0;
done:
  di_free(info);
  di_free(ids);
  di_request_destroy(req);
  di_options_destroy(sampling);
  di_engine_destroy(engine);
  di_tokenizer_destroy(tok);
  return rc;
}
