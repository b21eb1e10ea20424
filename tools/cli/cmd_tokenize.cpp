// `deepinfer tokenize`: JSON Lines {"text": ...} on stdin -> {"ids": [...]} on stdout, through
// the C ABI's tokenizer. A bad line gets an {"error": ...} line; the others still go through.
#include <string>

#include "tools/cli/commands.h"
#include "tools/cli/tokenizer_args.h"

namespace di::cli {

int cmd_tokenize(int argc, char** argv) {
  std::string path;
  uint32_t flags = DI_TOKENIZE_ADDED_TOKENS;
  const int rc = parse_tokenizer_args(
      "tokenize", argc, argv,
      "usage: deepinfer tokenize --tokenizer PATH [--no-specials] [--add-special]\n"
      "  Reads JSON Lines {\"text\": \"...\"} on stdin, writes {\"ids\": [...]} per line.\n"
      "  PATH: a model directory or a tokenizer.json file.\n"
      "  --no-specials  encode added/special token text as plain text (user content)\n"
      "  --add-special  add the BOS/EOS the tokenizer's post-processor adds\n",
      {{"--no-specials", 0, DI_TOKENIZE_ADDED_TOKENS}, {"--add-special", DI_TOKENIZE_ADD_SPECIAL, 0}},
      &path, &flags);
  if (rc >= 0) return rc;
  return run_json_lines("tokenize", path, [flags](di_tokenizer* tok, const nlohmann::json& in,
                                                  std::string* out, std::string* error) {
    if (in.is_discarded() || !in.is_object() || !in.contains("text") || !in["text"].is_string()) {
      *error = "expected a JSON object {\"text\": string}";
      return false;
    }
    const std::string& text = in["text"].get_ref<const std::string&>();
    int32_t* ids = nullptr;
    size_t num = 0;
    di_error* err = nullptr;
    if (di_tokenizer_encode(tok, text.data(), text.size(), flags, &ids, &num, &err) != DI_OK) return take_error(err, error);
    *out = "{\"ids\":[";
    for (size_t i = 0; i < num; ++i) {
      if (i) *out += ',';
      *out += std::to_string(ids[i]);
    }
    *out += "]}";
    di_free(ids);
    return true;
  });
}

}  // namespace di::cli
