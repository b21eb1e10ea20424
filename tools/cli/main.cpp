// `deepinfer`: the project's command-line tool. Dispatches to one subcommand per file; knows
// nothing of what the subcommands do.
#include <cstdio>
#include <cstring>
#include <exception>

#include "deepinfer.h"
#include "tools/cli/commands.h"

namespace di::cli {
namespace {

constexpr Command kCommands[] = {
    {"info", "print the version and what this build can do (JSON)", cmd_info},
    {"tokenize", "text -> token ids (JSON Lines on stdin and stdout)", cmd_tokenize},
    {"detokenize", "token ids -> text (JSON Lines on stdin and stdout)", cmd_detokenize},
    {"logits", "run a model over token ids and write float32 logits [tokens, vocab]", cmd_logits},
    {"generate", "generate from text or token-id prompts with the engine (sampling, batch files, streaming)", cmd_generate},
    {"chat", "chat with a model directory through the recipe (DeepSeek-V4 prompt format)", cmd_chat},
    {"make-tiny-model", "write the bundled tiny DeepSeek-V4 (random weights) and its tokenizer", cmd_make_tiny_model},
    {"render", "render a DeepSeek prompt from messages or an API request (JSON)", cmd_render},
    {"parse", "model output on stdin -> an API's events (SSE) or final response", cmd_parse},
    {"grammar", "check texts against a JSON Schema / regex / EBNF grammar, or benchmark masks", cmd_grammar},
    {"serve", "OpenAI- and Anthropic-compatible HTTP server (chat, responses, messages)", cmd_serve},
};

int usage(FILE* out) {
  std::fprintf(out, "usage: deepinfer <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(out, "\n`deepinfer <command> --help` describes a command; `deepinfer --version` prints the version.\n");
  return out == stdout ? 0 : 2;
}

}  // namespace
}  // namespace di::cli

int main(int argc, char** argv) {
  using namespace di::cli;
  // Load phases on stderr by default, as llama.cpp and vLLM show them; --log-level changes it.
  di_log_set(nullptr, nullptr, DI_LOG_INFO, nullptr);
  if (argc < 2) return usage(stderr);
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help"))
    return usage(stdout);
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V")) {
    std::printf("deepinfer %s\n", di_version_string());  // the library's, as `info` reports it
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) == 0) {
      try {
        return c.run(argc - 1, argv + 1);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "deepinfer %s: internal error: %s\n", c.name, e.what());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "deepinfer: unknown command '%s'\n\n", argv[1]);
  return usage(stderr);
}
