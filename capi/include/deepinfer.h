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
 * {"version":"1.0.0","cuda":true,"cuda_arch":"sm_90a","cuda_devices":0,"cpu_threads":8,
 *  "backends":[{"name":"cpu","available":true},{"name":"cuda","available":false,"devices":0,
 *  "library":".../libdeepinfer_cuda.so","reason":"no CUDA device: ..."}]}.
 * "cuda" says the build made the CUDA backend (libdeepinfer_cuda.so, loaded at run time from
 * this library's folder, its ../lib, $DI_CUDA_BACKEND or the linker's path; DI_CUDA_BACKEND=off
 * disables it); "backends" says which loaded and, for one that is not available, why.
 * Probed at the first call. The caller must not free it.
 * Thread-safety: any thread, any time. Never fails. */
DI_API const char* di_build_info(void);

/* Status codes. Zero is success, positive values are non-error outcomes, negative values are
 * errors. The enum only names the values; signatures use di_status (int32_t). */
typedef int32_t di_status;
enum {
  DI_OK = 0,
  DI_TIMEOUT = 1,           /* a wait ended without a result */
  DI_END_OF_STREAM = 2,     /* no more data will come */
  /* Reserved: no 1.x function returns these two. Every output buffer is allocated by the
   * library (so no buffer can be too small) and every wait takes a timeout (so a poll ends in
   * DI_TIMEOUT). They keep their values so bindings that name them stay valid, and a later
   * minor version may start returning them only from new functions. */
  DI_AGAIN = 3,             /* reserved: nothing available now; call again */
  DI_BUFFER_TOO_SMALL = 4,  /* reserved: the caller's buffer is too small */

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

/* Log records: what the library reports while it works (config read, weights mapped and
 * loaded with bytes and seconds, KV cache sized with blocks and bytes, device chosen, engine
 * ready; warnings and errors). Like llama_log_set, one process-wide sink. By default records
 * of level DI_LOG_WARN and more severe go to stderr, one line each. */
#define DI_LOG_ERROR 0
#define DI_LOG_WARN 1
#define DI_LOG_INFO 2
#define DI_LOG_DEBUG 3

/* Receives one record: `level` is one of DI_LOG_*, `message` is UTF-8, `len` bytes, not
 * NUL-terminated, without a trailing newline, valid only during the call. */
typedef void (*di_log_fn)(void* user_data, int32_t level, const char* message, size_t len);

/* Sends log records of `max_level` and more severe (DI_LOG_ERROR .. DI_LOG_DEBUG; DI_LOG_INFO
 * shows the load phases) to `fn`, or to stderr when `fn` is NULL; replaces any earlier sink.
 * The library keeps `user_data` as given and never frees it; it is no longer used once this
 * returns from a later call that installs another sink.
 * The callback runs on the thread that logs (the one calling di_engine_create, or an engine's
 * own threads), one record at a time: the library serializes calls, so the callback need not be
 * thread-safe, but it must not call di_log_set (that deadlocks) and should return quickly.
 * Returns DI_OK, or DI_E_INVALID_ARG for a level outside DI_LOG_ERROR..DI_LOG_DEBUG (with *err
 * set when err != NULL; the sink is then unchanged).
 * Thread-safety: any thread, any time. */
DI_API di_status di_log_set(di_log_fn fn, void* user_data, int32_t max_level, di_error** err);

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

/* A Hugging Face tokenizer.json byte-level BPE tokenizer (DeepSeek V3/V4, Llama-3, Qwen2/3)
 * whose ids match the reference implementation. Immutable once created: every call below
 * that takes a `const di_tokenizer*` may run concurrently from any number of threads. */
typedef struct di_tokenizer di_tokenizer;

/* Flags of di_tokenizer_encode. */
#define DI_TOKENIZE_ADDED_TOKENS 1u /* recognise added and special tokens written in the text */
#define DI_TOKENIZE_ADD_SPECIAL 2u  /* add the BOS/EOS the tokenizer's post-processor adds */
/* Flags of di_tokenizer_decode. */
#define DI_DECODE_SKIP_SPECIAL 1u   /* leave out tokens marked "special" */

/* Loads a tokenizer from `path` (`path_len` bytes of UTF-8): a model directory holding
 * tokenizer.json (and, when present, tokenizer_config.json for bos/eos/add_bos_token) or a
 * tokenizer.json file. On success *out receives a tokenizer the caller releases with
 * di_tokenizer_destroy. Tokenizers, recipes and engines opened on the same unchanged files
 * while one of them is alive share one loaded (immutable) tokenizer instead of parsing again.
 * Errors: DI_E_INVALID_ARG (NULL path or out), DI_E_NOT_FOUND / DI_E_IO (files),
 *         DI_E_PARSE (malformed JSON or fields; the message names the field),
 *         DI_E_UNSUPPORTED (a normalizer, pre-tokenizer, model, post-processor or decoder this
 *         library does not implement; the message names it), DI_E_OOM.
 * Thread-safety: any thread. */
DI_API di_status di_tokenizer_create(const char* path, size_t path_len, di_tokenizer** out,
                                     di_error** err);

/* Releases `tokenizer`. Accepts NULL. Never fails. The caller must ensure no other call on it
 * is running. */
DI_API void di_tokenizer_destroy(di_tokenizer* tokenizer);

/* Encodes `len` bytes of UTF-8 `text` into token ids. `flags` is a bitwise OR of
 * DI_TOKENIZE_* values: without DI_TOKENIZE_ADDED_TOKENS every character is plain text (a
 * user who types "<|im_end|>" gets the ids of those characters, never the control token).
 * *ids receives an array of *num_ids ids the caller frees with di_free (non-NULL even when
 * empty). `text` may be NULL only when `len` is 0.
 * Errors: DI_E_INVALID_ARG (NULL tokenizer/ids/num_ids, invalid UTF-8, unknown flag bits),
 *         DI_E_OOM. Thread-safety: any thread. */
DI_API di_status di_tokenizer_encode(const di_tokenizer* tokenizer, const char* text, size_t len,
                                     uint32_t flags, int32_t** ids, size_t* num_ids,
                                     di_error** err);

/* Encodes a prompt made of `num_segments` segments, each on its own: segment i is the
 * `lens[i]` bytes at `texts[i]`; when `special[i]` is non-zero it is template text in which
 * added and special tokens are recognised, otherwise it is content encoded as plain text.
 * *ids receives all ids (free with di_free); *special_ranges receives *num_ranges pairs
 * [begin, end) flattened as 2 * *num_ranges uint32_t values (free with di_free): the ids that
 * came from special segments, adjacent ones merged. No BOS/EOS is added.
 * Errors: DI_E_INVALID_ARG (NULL pointers where num_segments > 0, invalid UTF-8 in a segment;
 *         the message names "segments[i]"), DI_E_OOM. Thread-safety: any thread. */
DI_API di_status di_tokenizer_encode_segments(const di_tokenizer* tokenizer,
                                              const char* const* texts, const size_t* lens,
                                              const uint8_t* special, size_t num_segments,
                                              int32_t** ids, size_t* num_ids,
                                              uint32_t** special_ranges, size_t* num_ranges,
                                              di_error** err);

/* Decodes `num_ids` ids into UTF-8 text: *text receives a NUL-terminated string the caller
 * frees with di_free and *len (may be NULL) its length. Bytes that do not form valid UTF-8
 * become U+FFFD. `flags`: 0 or DI_DECODE_SKIP_SPECIAL.
 * Errors: DI_E_INVALID_ARG (NULL tokenizer/text, NULL ids with num_ids > 0, an id outside the
 *         vocabulary: the message names its index), DI_E_OOM. Thread-safety: any thread. */
DI_API di_status di_tokenizer_decode(const di_tokenizer* tokenizer, const int32_t* ids,
                                     size_t num_ids, uint32_t flags, char** text, size_t* len,
                                     di_error** err);

/* The raw bytes token `id` stands for (they may be part of a UTF-8 character, so they are not
 * necessarily valid UTF-8): *bytes receives a NUL-terminated copy the caller frees with
 * di_free and *len its length.
 * Errors: DI_E_INVALID_ARG (NULL argument, id outside the vocabulary), DI_E_OOM.
 * Thread-safety: any thread. */
DI_API di_status di_tokenizer_token_to_piece(const di_tokenizer* tokenizer, int32_t id,
                                             char** bytes, size_t* len, di_error** err);

/* Looks up the id of a token by its spelling in tokenizer.json: an added or special token's
 * content ("<|im_end|>") or a vocab entry in the
 * byte-level alphabet ("\xC4\xA0the", i.e. U+0120 followed by "the"). On DI_OK *id
 * receives it.
 * Errors: DI_E_INVALID_ARG (NULL tokenizer/id, NULL token with len > 0),
 *         DI_E_NOT_FOUND (no such token). Thread-safety: any thread. */
DI_API di_status di_tokenizer_token_id(const di_tokenizer* tokenizer, const char* token,
                                       size_t len, int32_t* id, di_error** err);

/* Returns the number of ids (the largest id + 1, added tokens included), or -1 for a NULL
 * tokenizer. Thread-safety: any thread. Never fails otherwise. */
DI_API int64_t di_tokenizer_vocab_size(const di_tokenizer* tokenizer);

/* Reports tokenizer_config.json's BOS and EOS ids (-1 when not configured) and whether
 * DI_TOKENIZE_ADD_SPECIAL prepends the BOS (1) or not (0). Each out pointer may be NULL.
 * Errors: DI_E_INVALID_ARG (NULL tokenizer). Thread-safety: any thread. */
DI_API di_status di_tokenizer_special_ids(const di_tokenizer* tokenizer, int32_t* bos_id,
                                          int32_t* eos_id, int32_t* add_bos_token,
                                          di_error** err);

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
 * di_options_schema): recipe_encoding ("dsv4", "dsv41", "dsv32", or "chat_template": the model
 * directory's own Jinja chat template, from chat_template.jinja or tokenizer_config.json; unset:
 * the directory's template when it has one and its config.json names no DeepSeek family (Llama,
 * Qwen), else "dsv4"; a templated recipe leaves tool calls in the output as text), recipe_model (the
 * served model name; default: the folder name of the model directory, or of the directory
 * holding the tokenizer.json, as `deepinfer serve` names it; "deepseek-v4" with path_len 0),
 * recipe_model_aliases (JSON: {"alias": "model"} or ["alias", ...]; default: "deepseek-v4" and
 * DeepSeek's public model names), recipe_context_length, recipe_clamp_max_tokens,
 * recipe_image_policy ("unsupported" default, "reject", "vision"), recipe_default_thinking,
 * recipe_ignore_server_tools, and for "vision" the image fetch policy: recipe_image_allow_remote
 * (0 refuses http(s) image URLs), recipe_image_allow_destinations / recipe_image_deny_destinations
 * (JSON arrays of "10.0.0.0/8", "127.0.0.1:8080", "[::1]:443" rules; by default loopback, private,
 * link-local, multicast and cloud-metadata addresses are refused after DNS resolution and on
 * every redirect), recipe_image_max_images, recipe_image_max_bytes, recipe_image_max_total_bytes,
 * recipe_image_max_concurrent_fetches, recipe_image_connect_timeout_ms, recipe_image_timeout_ms.
 * Other keys are ignored here.
 * Errors: DI_E_INVALID_ARG (out NULL, a recipe key with a bad value, named; a chat template
 * that does not parse, named with its line; DI_E_UNSUPPORTED for a construct outside the
 * supported Jinja subset), DI_E_NOT_FOUND /
 * DI_E_IO / DI_E_PARSE (the tokenizer files; "chat_template" asked of a directory without one),
 * DI_E_OOM.
 * Thread-safety: any thread; `options` must not be modified during the call. */
DI_API di_status di_recipe_create(const char* tokenizer_path, size_t path_len,
                                  const di_options* options, di_recipe** out, di_error** err);

/* Releases `recipe`. Accepts NULL. Prepared requests made from it stay valid. */
DI_API void di_recipe_destroy(di_recipe* recipe);

/* Validates an API request body (`len` bytes of JSON) for `protocol` (a DI_PROTOCOL_* value),
 * resolves its model name, renders the DeepSeek prompt, tokenizes it and checks the context
 * budget. With the "vision" image policy it also fetches (http(s) URLs, under the recipe's fetch
 * policy, so the call may block up to recipe_image_timeout_ms), decodes and fits every image,
 * and counts each image's tokens in the budget. On DI_OK *out receives a new di_prepared the
 * caller releases with di_prepared_destroy.
 * A rejected request returns DI_E_INVALID_ARG (400), DI_E_NOT_FOUND (404 model_not_found) or
 * DI_E_LIMIT (context_length_exceeded); *err's detail (di_error_detail) is then
 * {"status": <HTTP status>, "body": <the protocol's error body>} — OpenAI
 * {"error": {"message", "type", "param", "code"}} or Anthropic {"type": "error", "error":
 * {"type", "message"}} — ready to send to the client. An image that could not be fetched for a
 * reason on the network or remote side (retryable) is DI_E_INTERNAL with status 500; other image
 * problems (refused destination, limits, undecodable data) are 400s. DI_E_INVALID_ARG also for NULL
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

/* Sampling options as a JSON object whose keys are sampling option keys of di_options (the
 * keys of scope "sampling" in di_options_schema, e.g. temperature, max_tokens, logit_bias,
 * seed); fields at the engine's default are absent. max_tokens is filled from the context
 * budget when the request left it open. Stop strings are not here (see
 * di_prepared_stop_sequences_json). */
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
 * {"kind": "url" | "data_url" | "base64", "url"?, "data"?, "media_type"?, "detail"?,
 *  "width", "height", "num_tokens", "bytes"}: the last four describe the image as the model
 * takes it (fitted size, prompt tokens it occupies, size of di_prepared_image_data).
 * Empty unless the recipe's image policy is "vision". */
DI_API const char* di_prepared_images_json(const di_prepared* prepared, size_t* len);

/* Image `index` (0-based, placeholder order) as the model takes it: WebP bytes at the fitted
 * size of di_prepared_images_json. *len (may be NULL) receives their count. Returns NULL with
 * *len 0 for a NULL prepared or an index past the last image. The bytes are owned by
 * `prepared`, valid until di_prepared_destroy. Thread-safety: any thread. Never fails. */
DI_API const uint8_t* di_prepared_image_data(const di_prepared* prepared, size_t index,
                                             size_t* len);

/* Facts about the request as JSON: {"model": served name, "requested_model": as sent,
 * "encoding": "dsv4"|..., "protocol": "chat"|"responses"|"messages", "prompt_tokens": N or -1
 * (images included), "image_tokens": what the images add beyond one placeholder token each,
 * "thinking": bool}. */
DI_API const char* di_prepared_info_json(const di_prepared* prepared, size_t* len);

/* ======================================================================================== */
/* Parser: model output -> protocol events                                                  */
/* ======================================================================================== */

/* A parser turns one request's model output (text, or token ids with their text, in any
 * chunking) into its API's streaming events and final response: reasoning, answer text, DSML
 * tool calls (as JSON arguments), JSON-object output and stop sequences, written as Chat
 * Completions chunks, Responses events or Messages events.
 * Thread-safety: one stream per parser; calls on one parser must not run concurrently.
 * Different parsers are independent. */
typedef struct di_parser di_parser;

/* How a chunk ended the output (di_parse_chunk.finish_reason). The values equal the engine's
 * DI_FINISH_* of the same name, so a di_chunk's finish_reason can be copied as it is. */
enum {
  DI_PARSE_FINISH_NONE = 0,            /* more output follows */
  DI_PARSE_FINISH_STOP = 1,            /* the model ended its turn (EOS) */
  DI_PARSE_FINISH_LENGTH = 2,          /* max tokens or context reached */
  DI_PARSE_FINISH_STOP_SEQUENCE = 3,   /* the engine matched a stop string */
  DI_PARSE_FINISH_CANCELLED = 4,       /* cancelled: becomes the API's error event */
  DI_PARSE_FINISH_ERROR = 5,           /* the engine failed: the API's error event */
  DI_PARSE_FINISH_CONTENT_FILTER = 6   /* a filter stopped the output */
};

/* One piece of model output for di_parse_push. Set struct_size = sizeof(di_parse_chunk); fields
 * past struct_size are taken as absent, so older callers keep working when fields are added at
 * the end. `text` is UTF-8 (a character may be split across chunks; invalid bytes become
 * U+FFFD). With token_ids, a control token (<think>, </think>, the DSML token) is recognised by
 * its id and the same text typed as ordinary tokens stays text; the control token's text is
 * located in `text` in id order, which is exact for one token per chunk. Without token_ids the
 * markers are recognised by their text. Counts < 0 are unknown: the last known value is kept;
 * completion_tokens defaults to the number of token ids pushed. */
typedef struct di_parse_chunk {
  uint32_t struct_size;
  const char* text;               /* may be NULL when text_len is 0 */
  size_t text_len;
  const int32_t* token_ids;       /* may be NULL when num_token_ids is 0 */
  size_t num_token_ids;
  int32_t finish_reason;          /* DI_PARSE_FINISH_* */
  int64_t prompt_tokens;          /* including cached ones */
  int64_t cached_prompt_tokens;
  int64_t completion_tokens;      /* cumulative */
  const char* error_message;      /* DI_PARSE_FINISH_ERROR: what failed (UTF-8), may be NULL */
  size_t error_message_len;
} di_parse_chunk;

/* Receives one event, ready for SSE: `event: <event>` (omit the line when event_len is 0, as in
 * Chat Completions) and `data: <data>`. `data` is JSON except Chat Completions' closing
 * "[DONE]". Both strings are NUL-terminated and valid only during the call. Runs synchronously
 * on the thread calling di_parse_push / di_parse_finish; it must not call into the same parser. */
typedef void (*di_parse_event_fn)(void* user_data, const char* event, size_t event_len,
                                  const char* data, size_t data_len);

/* Creates a parser for the output of `prepared` (a request from di_recipe_prepare): its
 * protocol, prompt format, thinking mode, tools (function and custom), JSON-object mode, stop
 * strings, stream / include_usage flags, model name and the control-token ids of its recipe's
 * tokenizer. When that recipe has a tokenizer, token ids pushed to the parser are decoded with
 * it (their text is then ignored), so a control token is placed exactly however many ids a
 * chunk holds. `overrides_json` (`len` bytes; NULL / 0 for none) is a JSON object of keys of
 * di_parser_create_from_json that replace the prepared values, typically
 * {"request_id": "...", "created": 1700000000, "system_fingerprint": "..."}.
 * `prepared` is only read during the call and may be destroyed afterwards. On success *out
 * owns a new parser (release with di_parser_destroy).
 * Errors: DI_E_INVALID_ARG (NULL prepared or out, overrides not an object, an override key
 *         unknown or of the wrong type, named in the message), DI_E_PARSE (overrides not JSON),
 *         DI_E_OOM. Thread-safety: any thread; concurrent calls on one prepared are fine. */
DI_API di_status di_parser_create(const di_prepared* prepared, const char* overrides_json,
                                  size_t len, di_parser** out, di_error** err);

/* Creates a parser from parsing options given as a JSON object (for output that did not come
 * through di_recipe_prepare):
 *   {"protocol": "chat"|"responses"|"messages", "encoding": "dsv4"|"dsv41",
 *    "prompt_opened_thinking": bool, "thinking": bool, "parse_tool_calls": bool,
 *    "prompt_opened_tool_calls": bool,
 *    "tool_format": "dsml" (DeepSeek, the default) | "hermes" (Qwen2.5/Qwen3 <tool_call>) |
 *                   "llama3_json" (Llama-3.1/3.2 JSON calls) | "none" (calls stay text),
 *    "tools": [{"name", "parameters", "strict", "type": "function"|"custom"}],
 *    "json_object": bool, "stop": string|[string], "stream": bool, "include_usage": bool,
 *    "model": string, "request_id": string, "created": unix seconds, "system_fingerprint",
 *    "control_tokens": {"think_start", "think_end", "dsml", "eos": token ids}}
 * Every key is optional. An empty request_id gets a random one; created 0 takes the clock.
 * On success *out owns a new parser (release with di_parser_destroy).
 * Errors: DI_E_INVALID_ARG (NULL out, a key of the wrong type or unknown, named in the message),
 *         DI_E_PARSE (not JSON), DI_E_OOM. */
DI_API di_status di_parser_create_from_json(const char* options_json, size_t len,
                                            di_parser** out, di_error** err);

/* Releases `parser`. Accepts NULL. Never fails. */
DI_API void di_parser_destroy(di_parser* parser);

/* Feeds one chunk; calls on_event (may be NULL to only build the final response) for every
 * event the chunk completes, in order, before returning. A chunk with a finish reason ends the
 * output and delivers the terminal event (Chat's [DONE], response.completed / incomplete /
 * failed, message_stop, or the API's error event for CANCELLED / ERROR).
 * Returns DI_OK while the stream goes on, DI_END_OF_STREAM once its terminal event has been
 * delivered (by this call or an earlier one; later pushes deliver nothing).
 * Errors: DI_E_INVALID_ARG (NULL parser or chunk, struct_size too small, NULL text or
 *         token_ids with a non-zero length). */
DI_API di_status di_parse_push(di_parser* parser, const di_parse_chunk* chunk,
                               di_parse_event_fn on_event, void* user_data, di_error** err);

/* Feeds one engine chunk (as di_poll_chunk or a di_chunk_callback delivered it) exactly like
 * di_parse_push with the chunk's text, token ids, finish_reason, usage counts and error message.
 * Only chunks of one completion (one di_chunk.index) belong to one parser. The chunk and its
 * pointers are only read during the call. Returns and errors as di_parse_push (struct_size
 * must cover the fields up to error_message_len). */
struct di_chunk; /* the engine's output record, defined in the Engine section below */
DI_API di_status di_parse_push_chunk(di_parser* parser, const struct di_chunk* chunk,
                                     di_parse_event_fn on_event, void* user_data, di_error** err);

/* Ends the output without a finish reason from the engine ("end of stream", reported as a
 * normal stop) and delivers the remaining events. Idempotent: after the end it delivers
 * nothing. Returns DI_END_OF_STREAM.
 * Errors: DI_E_INVALID_ARG (NULL parser). */
DI_API di_status di_parse_finish(di_parser* parser, di_parse_event_fn on_event, void* user_data,
                                 di_error** err);

/* Writes the non-streaming response body (chat.completion, the Responses response object or
 * the Messages message; the API's error body when the stream failed) as JSON into a new
 * NUL-terminated buffer *json that the caller frees with di_free; *len (may be NULL) receives
 * its length. Thread-safety: as any call on the parser.
 * Errors: DI_E_INVALID_ARG (NULL parser or json), DI_E_STATE (the output has not ended: call
 *         di_parse_finish or push a chunk with a finish reason first), DI_E_OOM. */
DI_API di_status di_parse_response(const di_parser* parser, char** json, size_t* len,
                                   di_error** err);

/* ======================================================================================== */
/* Engine                                                                                   */
/* ======================================================================================== */

/* An inference engine: one loaded model directory, a paged KV cache, a scheduler that batches
 * every submitted request continuously, and two background threads (the step loop and the
 * output thread). Fully thread-safe: any thread may submit, poll, cancel or read metrics. */
typedef struct di_engine di_engine;

/* One submitted request (all of its n completions). Created by di_submit, released by
 * di_request_destroy. Outlives its engine safely: after di_engine_destroy it has its final
 * ("cancelled") chunk and di_poll_chunk then reaches DI_END_OF_STREAM. */
typedef struct di_request di_request;

/* Why a completion ended (di_chunk.finish_reason). */
enum {
  DI_FINISH_NONE = 0,          /* not finished: more chunks follow for this completion */
  DI_FINISH_STOP = 1,          /* an end-of-sequence token or one of stop_token_ids */
  DI_FINISH_LENGTH = 2,        /* max_tokens or the engine's max_model_len */
  DI_FINISH_STOP_SEQUENCE = 3, /* one of the `stop` strings (removed from the text) */
  DI_FINISH_CANCELLED = 4,     /* di_cancel, di_request_destroy or di_engine_destroy */
  DI_FINISH_ERROR = 5          /* the model or sampler failed; error_message says why */
};

/* A piece of a request's output. The caller sets struct_size = sizeof(di_chunk) before
 * di_poll_chunk; the library fills at most struct_size bytes (fields are only ever added at the
 * end) and writes back the size it filled. Pointers are borrowed: valid until the next
 * di_poll_chunk or di_request_destroy on the same request (for a callback: until it returns).
 * `text` never ends inside a UTF-8 character and is NUL-terminated. */
typedef struct di_chunk {
  uint32_t struct_size;
  uint32_t index;                  /* which of the request's n completions (0-based) */
  uint64_t request_id;
  const int32_t* token_ids;        /* new tokens of this completion */
  size_t num_tokens;
  const char* text;                /* the text the new tokens complete (may be empty) */
  size_t text_len;
  const float* logprobs;           /* num_tokens log-probabilities, or NULL if not requested */
  const int32_t* top_logprob_ids;  /* num_tokens x num_top_logprobs ids, most likely first */
  const float* top_logprobs;       /* their log-probabilities; NULL when num_top_logprobs is 0 */
  uint32_t num_top_logprobs;
  int32_t finish_reason;           /* DI_FINISH_*; set on the completion's last chunk */
  int32_t is_final;                /* 1 on the request's very last chunk */
  int32_t reserved0;
  int64_t prompt_tokens;           /* prompt length */
  int64_t cached_prompt_tokens;    /* prompt tokens served by the prefix cache */
  int64_t completion_tokens;       /* tokens generated so far by this completion */
  const char* error_message;       /* with DI_FINISH_ERROR, else "" */
  size_t error_message_len;
} di_chunk;

/* Receives each chunk of a request submitted with a callback. Runs on the engine's output
 * thread: keep it short; it may call di_cancel and di_request_destroy, never di_engine_destroy.
 * `chunk` and its pointers are valid only during the call. */
typedef void (*di_chunk_callback)(const di_chunk* chunk, void* user_data);

/* Loads the model directory `model_dir` (`model_dir_len` bytes of UTF-8: config.json,
 * *.safetensors and, when present, tokenizer.json for streamed text and stop strings), sizes
 * the KV cache and starts the engine's threads. `options` (may be NULL) holds engine-scope keys
 * (see di_options_schema); it is copied, not kept.
 * Speculative decoding: num_speculative_tokens N > 0 drafts up to N tokens a step with the
 * model's own MTP layers and verifies them in the same forward (greedy requests keep the longest
 * prefix equal to the model's argmax, sampled ones use rejection sampling, so outputs are
 * distributed exactly as without it); speculative_variable (default 1) picks each step's draft
 * length from the draft's confidence and measured step costs, 0 always verifies N. When
 * num_speculative_tokens is unset the environment decides: DEEPINFER_USE_NEXTN_DECODE=N, or
 * DEEPINFER_ENABLE_MTP_VARLEN=1 (N = 5; =0 selects the fixed length); a model without MTP
 * layers then runs without drafts (a logged warning) instead of failing. N is capped at the
 * model's smallest sliding ring minus one (what a rejected draft can be rolled back from).
 * Parallel layout: tensor_parallel_size, expert_parallel_size and data_parallel_size (default 1
 * each) multiply to the world size, one process per GPU; each process finds its rank in
 * parallel_rank / parallel_world_size / parallel_local_rank or, unset, in RANK / WORLD_SIZE /
 * LOCAL_RANK / LOCAL_WORLD_SIZE as torchrun sets them, and meets the others at nccl_rendezvous
 * (or MASTER_ADDR:MASTER_PORT). dp_vote ("all" / "any") and eplb, eplb_rebalance_interval,
 * eplb_num_redundant_experts tune data-parallel steps and expert load balancing. With every size
 * 1 (the default) no environment variable is read. The layout is checked before the model loads.
 * Errors: DI_E_INVALID_ARG (NULL out, a key of another scope, a bad value, named; a layout whose
 *         sizes do not multiply to WORLD_SIZE, a rank outside it, eplb without expert
 *         parallelism),
 *         DI_E_UNSUPPORTED (a layout of more than one process: this build has no NCCL paths yet;
 *         the message names each missing part),
 *         DI_E_NOT_FOUND / DI_E_IO / DI_E_PARSE (model files), DI_E_UNSUPPORTED (model family or
 *         device; num_speculative_tokens on a model without MTP layers or on a CUDA model),
 *         DI_E_LIMIT (kv_cache_bytes cannot hold one max_model_len sequence), DI_E_OOM (a CUDA
 *         model whose weights plus workspaces do not fit what gpu_memory_utilization and
 *         gpu_memory_limit_bytes leave free: checked before any weight is allocated, the message
 *         names the bytes needed, the bytes free and the GPUs of that size it would need).
 * Thread-safety: any thread. */
DI_API di_status di_engine_create(const char* model_dir, size_t model_dir_len,
                                  const di_options* options, di_engine** out, di_error** err);

/* Cancels every unfinished request (each receives its final DI_FINISH_CANCELLED chunk), joins
 * the engine's threads and frees the model and the cache. Accepts NULL. Requests stay valid
 * handles until di_request_destroy. Must not run concurrently with other calls on the same
 * engine, nor from a di_chunk_callback. */
DI_API void di_engine_destroy(di_engine* engine);

/* Submits a prompt of `num_ids` token ids with sampling options (`sampling` may be NULL:
 * temperature 1, no limit but max_model_len) and returns at once with *out. With `on_chunk`
 * set, every chunk goes to the callback (with `user_data`) and di_poll_chunk is not used;
 * otherwise chunks queue for di_poll_chunk.
 * Structured output: at most one of the sampling keys constraint_json_schema (JSON: a JSON
 * Schema, draft 2020-12 subset), constraint_json_object (1: any JSON object), constraint_regex
 * (string: the whole output matches this ECMAScript-subset regex) or constraint_ebnf (string: a
 * GBNF/Lark-like grammar whose start rule is `root`; `<[id]>` demands the added token `id`
 * itself, never its text) masks every sampled token so that the
 * output, when it ends with an end-of-sequence token, is a complete match; constraint_json_whitespace
 * ("flexible" default, or "compact") sets the whitespace allowed between JSON tokens. Each
 * distinct grammar is compiled once per engine and cached. A constrained request survives
 * preemption. Needs the model directory's tokenizer.json.
 * Errors: DI_E_INVALID_ARG (NULL engine/ids/out, empty prompt, an id outside the vocabulary,
 *         a sampling value out of range or a key of another scope — the message names it; two
 *         constraint keys; a constraint with ignore_eos or without a tokenizer.json; a
 *         malformed grammar),
 *         DI_E_UNSUPPORTED (a JSON Schema keyword or regex feature the compilers refuse, named),
 *         DI_E_PARSE (a schema that is not JSON), DI_E_LIMIT (prompt + max_tokens over
 *         max_model_len, n over max_num_seqs, a grammar too large), DI_E_STATE (engine shutting
 *         down), DI_E_OOM.
 * Thread-safety: any thread. */
DI_API di_status di_submit(di_engine* engine, const int32_t* ids, size_t num_ids,
                           const di_options* sampling, di_chunk_callback on_chunk,
                           void* user_data, di_request** out, di_error** err);

/* Submits a recipe-prepared request (see di_recipe_prepare): its token ids and its sampling
 * options (di_prepared_sampling_json); otherwise exactly as di_submit. `prepared` is only read
 * during the call and may be destroyed right after. The engine does not apply the request's
 * stop strings: feed the chunks to a parser made from di_prepared_parser_options_json, which
 * applies them, and di_cancel the request when it reports a stop sequence.
 * Structured output is enforced while decoding: response_format json_object / json_schema
 * (the answer is a JSON object / JSON valid against the schema; `strict` closes objects without
 * additionalProperties) and tools with "strict": true (a DSML tool-call block whose invokes
 * name declared tools and whose parameters follow the strict tool's schema, string="true" raw
 * text where the property admits a plain string, else JSON). When the prompt opened thinking,
 * the reasoning before </think> stays free. Requests with neither are not constrained.
 * Errors: as di_submit, plus DI_E_INVALID_ARG (NULL prepared, one without token ids, a strict
 * tool whose parameters are not an object schema), DI_E_UNSUPPORTED (images; a schema keyword
 * the compiler refuses, named in the message).
 * Thread-safety: any thread. */
DI_API di_status di_submit_prepared(di_engine* engine, const di_prepared* prepared,
                                    di_chunk_callback on_chunk, void* user_data, di_request** out,
                                    di_error** err);

/* Pulls the next chunk of `request`. Waits up to `timeout_ms` (0 = don't wait, -1 = forever).
 * Returns DI_OK (*chunk filled, see di_chunk for lifetimes), DI_TIMEOUT, DI_END_OF_STREAM
 * (after the chunk with is_final = 1 was taken), or an error: DI_E_INVALID_ARG (NULL request or
 * chunk, struct_size 0), DI_E_STATE (the request delivers to a callback).
 * Thread-safety: one poller per request at a time; di_cancel may run concurrently. */
DI_API di_status di_poll_chunk(di_request* request, int32_t timeout_ms, di_chunk* chunk,
                               di_error** err);

/* Asks the engine to end `request` early: its unfinished completions end with
 * DI_FINISH_CANCELLED and their KV blocks return to the pool. Idempotent; a finished request
 * or a destroyed engine makes it a no-op. Returns DI_OK, or DI_E_INVALID_ARG for NULL.
 * Thread-safety: any thread, including a di_chunk_callback. */
DI_API di_status di_cancel(di_request* request, di_error** err);

/* Returns the request's engine-wide id (as in di_chunk.request_id), or 0 for NULL. */
DI_API uint64_t di_request_id(const di_request* request);

/* Releases the handle; an unfinished request is cancelled first (a callback request still
 * receives its final chunk). Accepts NULL. Must not run concurrently with di_poll_chunk on the
 * same request. */
DI_API void di_request_destroy(di_request* request);

/* Writes the engine's metrics into a NUL-terminated buffer the caller frees with di_free:
 * `format` 0 = one JSON object (queue lengths, KV use, prefix-cache hit rate, tokens/s, time to
 * first token and inter-token latency histograms), 1 = Prometheus text exposition.
 *
 * Where a step's time goes (steady_clock on the step thread; every engine step that ran a
 * batch counts once, and its phases tile it, so their sum is the step's wall time):
 *   "steps"                 steps completed; each phase's "count" equals it in any one reading
 *   "step_phases"           {"schedule"|"prepare"|"forward"|"sample"|"output": {"seconds", "count"}}:
 *                           schedule = the scheduler picking the batch; prepare = batch assembly
 *                           (inputs, cache views); forward = the model's forward calls (on a
 *                           device, until the logits are on the host); sample = sampling, stop
 *                           checks and bookkeeping; output = handing events to the output thread
 *                           (and waiting for it when async scheduling is off) and the gauges'
 *                           snapshot
 *   "step_time_seconds"     histogram of step wall times ({"count", "sum", "buckets"} as the
 *                           latency histograms)
 *   "output_thread"         {"seconds", "count"}: the output thread's detokenization, stop strings
 *                           and delivery, per batch of events (overlaps the next step when async)
 *   "busy_forward_seconds"  the forward phase's seconds; "busy_wall_seconds" the wall time from the
 *                           first step's start to the last one's end; "busy_ratio" their quotient
 *                           (take deltas of the two over a steady period for a busy share)
 * In Prometheus text: deepinfer_steps_total, deepinfer_step_phase_seconds_total{phase=...},
 * deepinfer_step_phase_steps_total{phase=...}, deepinfer_step_time_seconds (histogram),
 * deepinfer_output_thread_seconds_total, deepinfer_output_thread_batches_total,
 * deepinfer_busy_forward_seconds_total, deepinfer_busy_wall_seconds_total, deepinfer_busy_ratio.
 * Errors: DI_E_INVALID_ARG (NULL engine/out, unknown format), DI_E_OOM. Thread-safety: any. */
DI_API di_status di_engine_metrics(di_engine* engine, int32_t format, char** out, size_t* len,
                                   di_error** err);

/* Writes a JSON object describing the engine into a buffer freed with di_free: the model
 * (family, model_dir, vocab_size, eos ids), the limits in force (max_model_len, max_num_seqs,
 * max_num_batched_tokens, block_size, kv_cache_bytes, KV blocks), the device, the speculative
 * decoding in force (num_speculative_tokens, speculative_variable), and "backends" as in
 * di_build_info. "batch_invariant" is true when the engine runs in deterministic mode (option
 * "deterministic"): a request's logits, logprobs and tokens then have the same bits whatever
 * else is batched with it, however its prompt is chunked and whether its prefix came from the
 * cache (sampled requests with a seed alike). "batch_invariance" says how: "kernels" (the model's
 * batch-invariant kernels; sequences are still batched: the CUDA models), "per_sequence" (each
 * sequence in a forward of its own: the CPU models) or "off". "parallel" is the layout in force:
 * {"tensor_parallel_size", "expert_parallel_size", "data_parallel_size", "world_size", "rank",
 * "local_rank", "dp_vote": "all" | "any", "rendezvous": "" | "file:PATH" | "tcp://HOST:PORT",
 * "eplb": {"enabled", "rebalance_interval", "num_redundant_experts"}}.
 * Errors: DI_E_INVALID_ARG (NULL engine/out), DI_E_OOM. Thread-safety: any thread. */
DI_API di_status di_engine_info(di_engine* engine, char** out, size_t* len, di_error** err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEEPINFER_H */
