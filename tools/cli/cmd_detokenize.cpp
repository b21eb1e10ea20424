// `deepinfer detokenize`: JSON Lines {"ids": [...]} on stdin -> {"text": ...} on stdout, through
// the C ABI's tokenizer. A bad line gets an {"error": ...} line; the others still go through.
#include <string>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/tokenizer_args.h"

namespace di::cli {

int cmd_detokenize(int argc, char** argv) {
  std::string path;
  uint32_t flags = 0;
  const int rc = parse_tokenizer_args(
      "detokenize", argc, argv,
      "usage: deepinfer detokenize --tokenizer PATH [--skip-special]\n"
      "  Reads JSON Lines {\"ids\": [...]} on stdin, writes {\"text\": \"...\"} per line.\n"
      "  PATH: a model directory or a tokenizer.json file.\n"
      "  --skip-special  leave out tokens marked special (BOS, EOS, ...)\n",
      {{"--skip-special", DI_DECODE_SKIP_SPECIAL, 0}}, &path, &flags);
  if (rc >= 0) return rc;
  return run_json_lines("detokenize", path, [flags](di_tokenizer* tok, const nlohmann::json& in,
                                                    std::string* out, std::string* error) {
    std::vector<int32_t> ids;
    bool ok = !in.is_discarded() && in.is_object() && in.contains("ids") && in["ids"].is_array();
    if (ok) {
      for (const auto& v : in["ids"]) {
        if (!v.is_number_integer() || v.get<int64_t>() < INT32_MIN || v.get<int64_t>() > INT32_MAX) {
          ok = false;
          break;
        }
        ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
      }
    }
    if (!ok) {
      *error = "expected a JSON object {\"ids\": [integer, ...]}";
      return false;
    }
    char* text = nullptr;
    size_t len = 0;
    di_error* err = nullptr;
    if (di_tokenizer_decode(tok, ids.data(), ids.size(), flags, &text, &len, &err) != DI_OK) return take_error(err, error);
    *out = nlohmann::json{{"text", std::string(text, len)}}.dump();
    di_free(text);
    return true;
  });
}

}  // namespace di::cli
