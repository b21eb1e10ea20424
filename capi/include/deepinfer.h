/*
 * deepinfer.h — the one public header of libdeepinfer (SONAME libdeepinfer.so.1).
 *
 * DeepInfer is an embedded inference engine for DeepSeek models with a protocol layer (the
 * "recipe") for OpenAI Chat Completions, OpenAI Responses and Anthropic Messages.
 *
 * Conventions that hold for every declaration below unless it says otherwise:
 *
 *  - Objects are opaque handles created by di_X_create(..., di_X** out, di_error** err) and
 *    released by di_X_destroy(di_X*), which accepts NULL and never fails. On failure a create
 *    call leaves *out untouched and leaks nothing.
 *  - Fallible calls return di_status: DI_OK (0), a positive outcome (DI_TIMEOUT, ...), or a
 *    negative error. When `err` is not NULL and the status is negative, *err receives a new
 *    di_error that the caller owns and releases with di_error_destroy. `err` may always be NULL.
 *    There is no thread-local "last error".
 *  - Strings passed in are UTF-8 as (pointer, length) pairs unless the parameter is documented
 *    as NUL-terminated (option keys are). Strings handed out carry their length and are also
 *    NUL-terminated for convenience.
 *  - Memory the library allocates for the caller is released with di_free (or the typed
 *    destroy named in the declaration), never with the caller's free().
 *  - No C++ exception, abort() or exit() crosses this boundary; bad input yields an error.
 *  - Integer types are fixed-width; no bool, enum, bit-field or varargs appears in a signature.
 */
#ifndef DEEPINFER_H
#define DEEPINFER_H

#include <stddef.h>
#include <stdint.h>

#if defined(DI_BUILDING_LIBRARY) && defined(__GNUC__)
#define DI_API __attribute__((visibility("default")))
#else
#define DI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================== */
/* Core: versions, status codes, errors, options, memory                                    */
/* ======================================================================================== */

#define DI_VERSION_MAJOR 1
#define DI_VERSION_MINOR 0
#define DI_VERSION_PATCH 0
/* The ABI version this header describes: major * 10000 + minor * 100 + patch. */
#define DI_ABI_VERSION 10000

/* Returns the ABI version of the loaded library (same encoding as DI_ABI_VERSION). A binding
 * built against this header must refuse a library whose major differs or whose minor is older.
 * Thread-safety: any thread, any time. Never fails. */
DI_API uint32_t di_abi_version(void);

/* Returns a static NUL-terminated version string such as "1.0.0 (cuda sm_90a)". The caller
 * must not free it. Thread-safety: any thread, any time. Never fails. */
DI_API const char* di_version_string(void);

/* Returns a static NUL-terminated JSON object describing what this build can do, for example
 * {"version":"1.0.0","cuda":true,"cuda_arch":"sm_90a","cuda_devices":0,"cpu_threads":8}.
 * "cuda_devices" is probed at the first call. The caller must not free it.
 * Thread-safety: any thread, any time. Never fails. */
DI_API const char* di_build_info(void);

/* Status codes. Zero is success, positive values are non-error outcomes, negative values are
 * errors. The enum only names the values; signatures use di_status (int32_t). */
typedef int32_t di_status;
enum {
  DI_OK = 0,
  DI_TIMEOUT = 1,           /* a wait ended without a result */
  DI_END_OF_STREAM = 2,     /* no more data will come */
  DI_AGAIN = 3,             /* nothing available now; call again */
  DI_BUFFER_TOO_SMALL = 4,  /* the caller's buffer is too small; the needed size was reported */

  DI_E_INVALID_ARG = -1,    /* a NULL handle, a wrong type, a value out of range, a bad request */
  DI_E_OOM = -2,            /* memory (host or device) ran out */
  DI_E_UNSUPPORTED = -3,    /* an unknown option key, a feature this build or model lacks */
  DI_E_NOT_FOUND = -4,      /* a file, model, token or name that does not exist */
  DI_E_IO = -5,             /* reading or writing a file or socket failed */
  DI_E_PARSE = -6,          /* malformed input: JSON, safetensors, tokenizer.json, config */
  DI_E_CANCELLED = -7,      /* the operation was cancelled */
  DI_E_INTERNAL = -8,       /* a bug in DeepInfer; the message says where */
  DI_E_LIMIT = -9,          /* over a limit: context length, KV budget, size caps */
  DI_E_STATE = -10,         /* the object is in the wrong state for the call (e.g. shut down) */
  DI_E_DEVICE = -11,        /* the GPU reported an error */
  DI_E_PERMISSION = -12     /* denied by policy (e.g. an image URL's destination) */
};

/* Returns a static NUL-terminated name for `status` ("DI_OK", "DI_E_INVALID_ARG", ...) or
 * "DI_UNKNOWN_STATUS" for a value this library does not define. Never NULL.
 * Thread-safety: any thread, any time. Never fails. */
DI_API const char* di_status_name(di_status status);

/* An error's detail: its status code, a human-readable message that names the field or key at
 * fault, and an optional machine-readable JSON detail (the recipe puts an API's error body and
 * HTTP status there). Created by the library, owned by the caller. */
typedef struct di_error di_error;

/* Returns the error's code (a negative di_status), or DI_E_INVALID_ARG for a NULL `error`.
 * Thread-safety: any thread; the error is immutable. */
DI_API di_status di_error_code(const di_error* error);

/* Returns the error's NUL-terminated UTF-8 message, valid until di_error_destroy(error).
 * Returns "" for a NULL `error`. Thread-safety: any thread; the error is immutable. */
DI_API const char* di_error_message(const di_error* error);

/* Returns the error's NUL-terminated JSON detail, or "" when it has none; valid until
 * di_error_destroy(error). Thread-safety: any thread; the error is immutable. */
DI_API const char* di_error_detail(const di_error* error);

/* Releases `error`. Accepts NULL. Never fails. */
DI_API void di_error_destroy(di_error* error);

/* Releases memory the library allocated for the caller where a declaration says "free with
 * di_free". Accepts NULL. Never fails. Thread-safety: any thread. */
DI_API void di_free(void* ptr);

/* A bag of typed, keyed settings: engine creation, sampling parameters, recipe configuration.
 * Keys are NUL-terminated ASCII names from a fixed table (see "Option keys" below); each key has
 * one type (int64, double, string or JSON). Setting an unknown key fails with
 * DI_E_UNSUPPORTED, which doubles as feature detection; setting a key with the wrong type fails
 * with DI_E_INVALID_ARG. Both messages name the key.
 * Thread-safety: not synchronized. One thread may modify an options object at a time; readers
 * (including a di_X_create call that consumes it) must not run concurrently with writers. The
 * library copies what it needs, so an options object may be destroyed right after use. */
typedef struct di_options di_options;

/* Creates an empty options object in *out.
 * Errors: DI_E_INVALID_ARG (out is NULL), DI_E_OOM. */
DI_API di_status di_options_create(di_options** out, di_error** err);

/* Creates a deep copy of `src` in *out.
 * Errors: DI_E_INVALID_ARG (src or out is NULL), DI_E_OOM. */
DI_API di_status di_options_clone(const di_options* src, di_options** out, di_error** err);

/* Releases `options`. Accepts NULL. Never fails. */
DI_API void di_options_destroy(di_options* options);

/* Sets an int64 key (replacing an earlier value).
 * Errors: DI_E_INVALID_ARG (NULL options or key, key of another type),
 *         DI_E_UNSUPPORTED (unknown key). */
DI_API di_status di_options_set_i64(di_options* options, const char* key, int64_t value,
                                    di_error** err);

/* Sets a double key. An integral value is accepted for a double key; NaN is rejected.
 * Errors: DI_E_INVALID_ARG (NULL options or key, NaN, key of another type),
 *         DI_E_UNSUPPORTED (unknown key). */
DI_API di_status di_options_set_f64(di_options* options, const char* key, double value,
                                    di_error** err);

/* Sets a string key to the `len` bytes at `value` (copied; need not be NUL-terminated; must be
 * valid UTF-8 without NUL bytes). `value` may be NULL only when `len` is 0.
 * Errors: DI_E_INVALID_ARG (NULL options/key, invalid UTF-8, embedded NUL, key of another type),
 *         DI_E_UNSUPPORTED (unknown key). */
DI_API di_status di_options_set_str(di_options* options, const char* key, const char* value,
                                    size_t len, di_error** err);

/* Sets a JSON key to the document in the `len` bytes at `json` (parsed and stored).
 * Errors: DI_E_INVALID_ARG (NULL options/key, key of another type), DI_E_PARSE (not valid
 *         JSON), DI_E_UNSUPPORTED (unknown key). */
DI_API di_status di_options_set_json(di_options* options, const char* key, const char* json,
                                     size_t len, di_error** err);

/* Sets several keys at once from a JSON object {"key": value, ...}: integers go to int64 keys,
 * numbers to double keys, strings to string keys, anything to JSON keys. All-or-nothing: on
 * error `options` is unchanged.
 * Errors: DI_E_PARSE (not a JSON object), DI_E_UNSUPPORTED (an unknown key, named),
 *         DI_E_INVALID_ARG (a value of the wrong type, named). */
DI_API di_status di_options_update_json(di_options* options, const char* json, size_t len,
                                        di_error** err);

/* Reads an int64 key into *value.
 * Returns DI_OK, or DI_E_NOT_FOUND when the key is known but unset.
 * Errors: DI_E_INVALID_ARG (NULL argument, key of another type), DI_E_UNSUPPORTED (unknown). */
DI_API di_status di_options_get_i64(const di_options* options, const char* key, int64_t* value,
                                    di_error** err);

/* Reads a double key into *value. Same outcomes as di_options_get_i64. */
DI_API di_status di_options_get_f64(const di_options* options, const char* key, double* value,
                                    di_error** err);

/* Reads a string key: *value points at a NUL-terminated copy owned by `options`, valid until
 * the key is set again or the options are destroyed; *len receives its length.
 * Same outcomes as di_options_get_i64. */
DI_API di_status di_options_get_str(const di_options* options, const char* key,
                                    const char** value, size_t* len, di_error** err);

/* Reads a JSON key as compact JSON text, with the same lifetime rule as di_options_get_str.
 * Same outcomes as di_options_get_i64. */
DI_API di_status di_options_get_json(const di_options* options, const char* key,
                                     const char** json, size_t* len, di_error** err);

/* Serializes every set key as one JSON object into a NUL-terminated buffer the caller frees
 * with di_free; *len (may be NULL) receives its length.
 * Errors: DI_E_INVALID_ARG (NULL options or json), DI_E_OOM. */
DI_API di_status di_options_to_json(const di_options* options, char** json, size_t* len,
                                    di_error** err);

/* Returns a static JSON array describing every key the library knows:
 * [{"key":"temperature","type":"double","scope":"sampling","doc":"..."}, ...].
 * Thread-safety: any thread. Never fails. */
DI_API const char* di_options_schema(void);

/* ======================================================================================== */
/* Tokenizer                                                                                */
/* ======================================================================================== */

/* ======================================================================================== */
/* Recipe: API request -> prompt and token ids                                              */
/* ======================================================================================== */

/* The request protocols di_recipe_prepare understands. */
enum {
  DI_PROTOCOL_CHAT_COMPLETIONS = 1, /* OpenAI POST /v1/chat/completions */
  DI_PROTOCOL_RESPONSES = 2,        /* OpenAI POST /v1/responses */
  DI_PROTOCOL_MESSAGES = 3          /* Anthropic POST /v1/messages */
};

/* A recipe: how API requests become DeepSeek prompts for one served model — the prompt format
 * (V3.2, V4, V4.1), the tokenizer, the model names it answers to and the context budget.
 * Immutable after creation; share it freely between threads. */
typedef struct di_recipe di_recipe;

/* One prepared request: prompt text, token ids, sampling options, stop sequences, output
 * constraint and output-parser options. Immutable; readable from any thread. */
typedef struct di_prepared di_prepared;

/* Creates a recipe in *out.
 * `tokenizer_path` (`path_len` bytes, UTF-8) names a model directory or a tokenizer.json; with
 * path_len 0 no tokenizer is loaded and prepared requests carry the prompt text only (no ids,
 * no context-budget check). `options` may be NULL; the recipe reads these keys (see
 * di_options_schema): recipe_encoding ("dsv4" default, "dsv41", "dsv32"), recipe_model (the
 * served model name), recipe_model_aliases (JSON: {"alias": "model"} or ["alias", ...]; default:
 * DeepSeek's public model names), recipe_context_length, recipe_clamp_max_tokens,
 * recipe_image_policy ("unsupported" default, "reject", "vision"), recipe_default_thinking,
 * recipe_ignore_server_tools. Other keys are ignored here.
 * Errors: DI_E_INVALID_ARG (out NULL, a recipe key with a bad value, named), DI_E_NOT_FOUND /
 * DI_E_IO / DI_E_PARSE (the tokenizer files), DI_E_OOM.
 * Thread-safety: any thread; `options` must not be modified during the call. */
DI_API di_status di_recipe_create(const char* tokenizer_path, size_t path_len,
                                  const di_options* options, di_recipe** out, di_error** err);

/* Releases `recipe`. Accepts NULL. Prepared requests made from it stay valid. */
DI_API void di_recipe_destroy(di_recipe* recipe);

/* Validates an API request body (`len` bytes of JSON) for `protocol` (a DI_PROTOCOL_* value),
 * resolves its model name, renders the DeepSeek prompt, tokenizes it and checks the context
 * budget. On DI_OK *out receives a new di_prepared the caller releases with
 * di_prepared_destroy.
 * A rejected request returns DI_E_INVALID_ARG (400), DI_E_NOT_FOUND (404 model_not_found) or
 * DI_E_LIMIT (context_length_exceeded); *err's detail (di_error_detail) is then
 * {"status": <HTTP status>, "body": <the protocol's error body>} — OpenAI
 * {"error": {"message", "type", "param", "code"}} or Anthropic {"type": "error", "error":
 * {"type", "message"}} — ready to send to the client. DI_E_INVALID_ARG also for NULL
 * recipe/out, an unknown protocol, or json NULL with len > 0.
 * Thread-safety: any thread, concurrently on the same recipe. */
DI_API di_status di_recipe_prepare(const di_recipe* recipe, int32_t protocol, const char* json,
                                   size_t len, di_prepared** out, di_error** err);

/* Releases `prepared`. Accepts NULL. */
DI_API void di_prepared_destroy(di_prepared* prepared);

/* The accessors below return pointers owned by `prepared`, valid until di_prepared_destroy.
 * Strings are NUL-terminated; `len` / `count` may be NULL. A NULL `prepared` yields "" / NULL
 * with a zero length. Thread-safety: any thread. They never fail. */

/* The rendered prompt text. */
DI_API const char* di_prepared_prompt(const di_prepared* prepared, size_t* len);

/* The prompt's token ids (*count of them); NULL with *count 0 when the recipe has no tokenizer. */
DI_API const int32_t* di_prepared_token_ids(const di_prepared* prepared, size_t* count);

/* The token ranges that came from template text (the only ids that may be control tokens), as
 * *count pairs [begin, end): element 2*i is begin, 2*i+1 is end. */
DI_API const uint32_t* di_prepared_special_ranges(const di_prepared* prepared, size_t* count);

/* Sampling options as a JSON object whose keys are the sampling option keys of di_options
 * (temperature, top_p, top_k, min_p, max_tokens, min_tokens, seed, presence_penalty,
 * frequency_penalty, repetition_penalty, logit_bias, logprobs, top_logprobs, n,
 * stop_token_ids); unset fields are absent. max_tokens is filled from the context budget when
 * the request left it open. Stop strings are not here (see di_prepared_stop_sequences_json). */
DI_API const char* di_prepared_sampling_json(const di_prepared* prepared, size_t* len);

/* The request's stop strings as a JSON array. They must not fire inside reasoning or tool-call
 * markup, so the output parser (not the engine's sampler) applies them; when the parser reports
 * a stop sequence the caller cancels the engine request. */
DI_API const char* di_prepared_stop_sequences_json(const di_prepared* prepared, size_t* len);

/* 1 when the client asked for a streamed response, else 0. */
DI_API int32_t di_prepared_stream(const di_prepared* prepared);

/* The output constraint as JSON: {"type": "none"} | {"type": "json_object"} |
 * {"type": "json_schema", "name": ..., "strict": bool, "schema": {...}}. */
DI_API const char* di_prepared_constraint_json(const di_prepared* prepared, size_t* len);

/* The output parser's options for this request, in the JSON form the parser takes
 * (protocol, encoding, prompt_opened_thinking, tools, json_object, stop, stream, ...). */
DI_API const char* di_prepared_parser_options_json(const di_prepared* prepared, size_t* len);

/* The images the prompt's placeholders stand for, in order, as a JSON array of
 * {"kind": "url" | "data_url" | "base64", "url"?, "data"?, "media_type"?, "detail"?}.
 * Empty unless the recipe's image policy is "vision". */
DI_API const char* di_prepared_images_json(const di_prepared* prepared, size_t* len);

/* Facts about the request as JSON: {"model": served name, "requested_model": as sent,
 * "encoding": "dsv4"|..., "protocol": "chat"|"responses"|"messages", "prompt_tokens": N or -1,
 * "thinking": bool}. */
DI_API const char* di_prepared_info_json(const di_prepared* prepared, size_t* len);

/* ======================================================================================== */
/* Parser: model output -> protocol events                                                  */
/* ======================================================================================== */

/* ======================================================================================== */
/* Engine                                                                                   */
/* ======================================================================================== */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEEPINFER_H */
