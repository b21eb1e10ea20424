/* core.c: the smallest DeepInfer program. Checks the library's ABI version, builds an options
 * object, reads a value back, and shows how an error looks (an unknown key), in plain C99. */
#include <stdio.h>
#include <string.h>

#include "deepinfer.h"

int main(void) {
  di_options* opts = NULL;
  di_error* err = NULL;
  double temperature = 0.0;
  char* json = NULL;
  di_status st;

  if (di_abi_version() / 10000 != DI_VERSION_MAJOR) {
    fprintf(stderr, "libdeepinfer major version mismatch\n");
    return 1;
  }
  printf("deepinfer %s\n", di_version_string());
  printf("build: %s\n", di_build_info());

  if (di_options_create(&opts, &err) != DI_OK) goto fail;
  if (di_options_set_f64(opts, "temperature", 0.7, &err) != DI_OK) goto fail;
  if (di_options_set_i64(opts, "max_tokens", 64, &err) != DI_OK) goto fail;
  if (di_options_get_f64(opts, "temperature", &temperature, &err) != DI_OK) goto fail;
  if (di_options_to_json(opts, &json, NULL, &err) != DI_OK) goto fail;
  printf("options: %s (temperature read back: %.2f)\n", json, temperature);
  di_free(json);

  /* An unknown key is an error value, never a crash: this is how callers detect features. */
  st = di_options_set_i64(opts, "no_such_key", 1, &err);
  printf("setting an unknown key: %s: %s\n", di_status_name(st), di_error_message(err));
  di_error_destroy(err);
  err = NULL;
  if (st != DI_E_UNSUPPORTED) {
    di_options_destroy(opts);
    return 1;
  }
  di_options_destroy(opts);
  return 0;

fail:
  fprintf(stderr, "error: %s: %s\n", di_status_name(di_error_code(err)), di_error_message(err));
  di_error_destroy(err);
  di_options_destroy(opts);
  return 1;
}
