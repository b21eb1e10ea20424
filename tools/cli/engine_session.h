// EngineSession: what `generate` and `chat` share — a di_engine on a model directory (through
// the C ABI, as any embedder would use it), the model's tokenizer when it has one, and running
// one request to its end while streaming its chunks.
#pragma once

#include <csignal>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "deepinfer.h"

namespace di::recipe {
class Tokenizer;
}

namespace di::cli {

struct CompletionResult {
  std::vector<int32_t> ids;
  std::string text;
  std::string finish_reason;
  std::string error;
  std::vector<float> logprobs;
};

struct RequestResult {
  std::vector<CompletionResult> choices;
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
};

const char* finish_name(int32_t reason);

// Sees each chunk as it arrives (its pointers are valid during the call only).
using ChunkFn = std::function<void(const di_chunk&)>;

class EngineSession {
 public:
  // `engine_options`: engine-scope keys as JSON. The tokenizer is loaded when model_dir has one.
  static Result<std::unique_ptr<EngineSession>> open(const std::string& model_dir,
                                                     const nlohmann::json& engine_options);
  ~EngineSession();

  // The model's tokenizer, behind a narrow surface so a command's file need not include both the
  // tokenizer and the prompt encoders.
  bool has_tokenizer() const { return tokenizer_ != nullptr; }
  // Text -> ids with the tokenizer's BOS rule (tokenizer_config.json's add_bos_token).
  Result<std::vector<int32_t>> encode_text(const std::string& text) const;
  // Prompt segments (text, is template) -> ids: control tokens only inside template segments.
  Result<std::vector<int32_t>> encode_segments(const std::vector<std::pair<std::string, bool>>& segments) const;
  std::optional<std::string> token_bytes(int32_t id) const;
  int32_t token_id(std::string_view token) const;  // -1 when absent
  int32_t eos_id() const;                          // -1 when unknown
  di_engine* engine() const { return engine_; }

  // Submits `ids` with sampling options (JSON) and waits for the end; `on_chunk` (may be empty)
  // sees each chunk as it streams.
  Result<RequestResult> run(const std::vector<int32_t>& ids, const nlohmann::json& sampling,
                            const ChunkFn& on_chunk = {},
                            const volatile std::sig_atomic_t* interrupted = nullptr);
  // Submits without waiting; Result holds the request (caller destroys it) for collect().
  Result<di_request*> submit(const std::vector<int32_t>& ids, const nlohmann::json& sampling);
  // `interrupted` (may be NULL) is read while waiting: once it is non-zero the request is
  // cancelled (what Ctrl-C does in `chat`), and its completions end "cancelled".
  static Result<RequestResult> collect(di_request* request, int n,
                                       const ChunkFn& on_chunk = {},
                                       const volatile std::sig_atomic_t* interrupted = nullptr);

 private:
  di_engine* engine_ = nullptr;
  std::shared_ptr<const recipe::Tokenizer> tokenizer_;
};

// Parses "--flag value" sampling and engine flags shared by generate and chat into the two
// option objects. Returns false (with `error`) for a bad value; `consumed` says whether `flag`
// was one of them.
bool parse_common_flag(const std::string& flag, const std::string& value, nlohmann::json& sampling,
                       nlohmann::json& engine_opts, bool* consumed, std::string* error);
// Flags without a value (--ignore-eos, --logprobs, --deterministic).
bool parse_common_switch(const std::string& flag, nlohmann::json& sampling, nlohmann::json& engine_opts);
extern const char* const kCommonFlagsHelp;

// The argument loop of a command that takes the common flags (generate, chat): `on_switch`
// claims the command's own flags without a value, `on_value` those with one; each returns false
// for a flag that is not its. Returns -1 when all arguments were read, else the exit status
// (0 after --help, 2 for bad usage, said on stderr as "deepinfer <command>: ...").
struct CommandArgs {
  const char* command;
  void (*usage)();
  std::function<bool(const std::string& flag)> on_switch;
  std::function<bool(const std::string& flag, const std::string& value)> on_value;
};
int read_command_args(int argc, char** argv, const CommandArgs& args, nlohmann::json& sampling,
                      nlohmann::json& engine_opts);

}  // namespace di::cli
