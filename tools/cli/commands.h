// The `deepinfer` command-line tool's subcommands. Each lives in its own cmd_<name>.cpp and is
// listed in kCommands (main.cpp). A command returns the process exit code: 0 ok, 1 failure,
// 2 bad input (usage errors, rejected requests).
#pragma once

namespace di::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
};

int cmd_info(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_detokenize(int argc, char** argv);
int cmd_make_tiny_model(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_logits(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_render(int argc, char** argv);
int cmd_parse(int argc, char** argv);
int cmd_grammar(int argc, char** argv);
int cmd_serve(int argc, char** argv);

}  // namespace di::cli
