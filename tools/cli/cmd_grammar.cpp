// `deepinfer grammar`: the structured-output compilers from the command line. --check runs texts
// (JSON Lines {"text": ...}) through the matcher of a JSON Schema / regex / EBNF grammar and prints
// {"valid": ...} per line; --bench times compilation and per-token masks over JSON Schema files
// with a real tokenizer's vocabulary. Uses engine/constrain directly; owns no grammar logic.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capi/src/constraint_vocabulary.h"
#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/matcher.h"
#include "recipe/tokenizer/tokenizer.h"
#include "tools/cli/commands.h"

namespace di::cli {
namespace {

namespace fs = std::filesystem;
using namespace di::engine::constrain;
using Clock = std::chrono::steady_clock;
using ojson = nlohmann::ordered_json;

int usage_error(const std::string& message) {
  std::fprintf(stderr, "deepinfer grammar: %s (see --help)\n", message.c_str());
  return 2;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

void print_json_line(const nlohmann::json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// A vocabulary of the 256 single bytes (+ an end token): the matcher then judges raw text.
std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
  tokens.push_back("");
  auto v = TokenVocabulary::create(std::move(tokens), {256}, {});
  return std::make_shared<const TokenVocabulary>(std::move(v).value());
}

int run_check(const ConstraintSpec& spec) {
  auto g = compile_constraint(spec);
  if (!g.is_ok()) {
    print_json_line({{"error", g.status().message()}});
    return 2;
  }
  auto compiled = std::make_shared<const CompiledGrammar>(*g, byte_vocabulary());
  std::string line;
  size_t n = 0;
  bool bad_input = false;
  while (std::getline(std::cin, line)) {
    ++n;
    if (line.empty()) continue;
    nlohmann::json in = nlohmann::json::parse(line, nullptr, false);
    if (in.is_discarded() || !in.is_object() || !in.contains("text") || !in["text"].is_string()) {
      print_json_line({{"error", {{"line", n}, {"message", "expected a JSON object {\"text\": string}"}}}});
      bad_input = true;
      continue;
    }
    Matcher m(compiled);
    const std::string& text = in["text"].get_ref<const std::string&>();
    const bool valid = m.accept_bytes(text).is_ok() && m.can_end();
    print_json_line({{"valid", valid}});
  }
  return bad_input ? 2 : 0;
}

// ---- --bench ------------------------------------------------------------------------------------

// Orders an instance's object keys as the schema's `properties` list (the order our grammar
// generates); keys the schema does not list keep their place after them.
ojson order_like_schema(const ojson& v, const ojson& schema, const ojson& root, int depth = 0) {
  if (depth > 32 || !schema.is_object()) return v;
  if (schema.contains("$ref") && schema["$ref"].is_string()) {
    const std::string ref = schema["$ref"].get<std::string>();
    if (ref.rfind("#", 0) == 0) {
      try {
        const ojson& target = root.at(nlohmann::ordered_json::json_pointer(ref.substr(1)));
        return order_like_schema(v, target, root, depth + 1);
      } catch (...) {
        return v;
      }
    }
  }
  if (v.is_object()) {
    ojson props = ojson::object();
    if (schema.contains("properties") && schema["properties"].is_object()) props = schema["properties"];
    for (const char* key : {"anyOf", "oneOf", "allOf"}) {
      if (!schema.contains(key) || !schema[key].is_array()) continue;
      for (const ojson& b : schema[key])
        if (b.is_object() && b.contains("properties") && b["properties"].is_object())
          for (auto it = b["properties"].begin(); it != b["properties"].end(); ++it)
            if (!props.contains(it.key())) props[it.key()] = it.value();
    }
    ojson out = ojson::object();
    for (auto it = props.begin(); it != props.end(); ++it)
      if (v.contains(it.key())) out[it.key()] = order_like_schema(v[it.key()], it.value(), root, depth + 1);
    const ojson extra = schema.contains("additionalProperties") ? schema["additionalProperties"] : ojson(true);
    for (auto it = v.begin(); it != v.end(); ++it)
      if (!out.contains(it.key())) out[it.key()] = order_like_schema(it.value(), extra, root, depth + 1);
    return out;
  }
  if (v.is_array()) {
    ojson out = ojson::array();
    for (size_t i = 0; i < v.size(); ++i) {
      ojson s = true;
      if (schema.contains("prefixItems") && schema["prefixItems"].is_array() && i < schema["prefixItems"].size())
        s = schema["prefixItems"][i];
      else if (schema.contains("items"))
        s = schema["items"];
      out.push_back(order_like_schema(v[i], s, root, depth + 1));
    }
    return out;
  }
  return v;
}

struct Stats {
  double mean = 0, p50 = 0, p99 = 0;
  size_t n = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  s.p50 = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, size_t(0.99 * double(v.size())))];
  return s;
}

nlohmann::json stats_json(const Stats& s) {
  return {{"mean_us", std::round(s.mean * 10) / 10}, {"p50_us", std::round(s.p50 * 10) / 10},
          {"p99_us", std::round(s.p99 * 10) / 10}, {"count", s.n}};
}

double us_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

int run_bench(const std::string& tokenizer_path, const std::string& dir, size_t limit) {
  auto tok = recipe::Tokenizer::load(tokenizer_path);
  if (!tok.is_ok()) return usage_error("--tokenizer: " + tok.status().message());
  std::vector<int32_t> eos;
  if ((*tok)->eos_id()) eos.push_back(*(*tok)->eos_id());
  auto v = model_vocabulary(capi::model_tokens_from_tokenizer(**tok, 0, eos));
  if (!v.is_ok()) return usage_error("vocabulary: " + v.status().message());
  auto vocab = std::make_shared<const TokenVocabulary>(std::move(v).value());
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec || files.empty()) return usage_error("--dir " + dir + ": no .json schema files");
  std::sort(files.begin(), files.end());
  if (files.size() > limit) files.resize(limit);

  std::vector<double> compile_us, first_us, warm_us;
  size_t compiled = 0, refused = 0, instances = 0, walked = 0;
  std::vector<uint32_t> mask(vocab->mask_words());
  for (const fs::path& f : files) {
    std::string text;
    if (!read_file(f.string(), &text)) continue;
    ojson doc = ojson::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("schema")) continue;
    const ojson& schema = doc["schema"];
    const auto t0 = Clock::now();
    auto g = compile_json_schema(schema);
    if (!g.is_ok()) {
      ++refused;
      continue;
    }
    auto cg = std::make_shared<const CompiledGrammar>(*g, vocab);
    compile_us.push_back(us_since(t0));
    ++compiled;
    if (!doc.contains("tests") || !doc["tests"].is_array()) continue;
    for (const ojson& t : doc["tests"]) {
      if (!t.value("valid", false) || !t.contains("data")) continue;
      ++instances;
      const std::string inst = order_like_schema(t["data"], schema, schema).dump();
      auto ids = (*tok)->encode(inst, false);
      if (!ids.is_ok()) continue;
      bool whole = true;
      for (int pass = 0; pass < 2 && whole; ++pass) {
        Matcher m(cg);
        for (int32_t id : *ids) {
          const auto t1 = Clock::now();
          m.fill_mask(mask.data());
          (pass == 0 ? first_us : warm_us).push_back(us_since(t1));
          if (!m.accept_token(static_cast<uint32_t>(id)).is_ok()) {
            whole = false;  // the instance departs from our grammar (e.g. a key order we do not generate)
            break;
          }
        }
      }
      walked += whole;
    }
  }
  const Stats c = stats(compile_us), fm = stats(first_us), wm = stats(warm_us);
  print_json_line({{"schemas", files.size()}, {"compiled", compiled}, {"refused", refused},
                   {"vocab", vocab->size()}, {"valid_instances", instances}, {"instances_walked", walked},
                   {"compile", stats_json(c)}, {"mask_first_visit", stats_json(fm)}, {"mask", stats_json(wm)}});
  std::fprintf(stderr,
               "grammar bench: %zu schemas, %zu compiled, %zu refused; vocab %u\n"
               "  compile: mean %.0f us, p50 %.0f us, p99 %.0f us\n"
               "  mask (warm, %zu calls): mean %.1f us, p50 %.1f us, p99 %.1f us\n"
               "  mask (first visit, node classes computed): mean %.1f us, p50 %.1f us, p99 %.0f us\n",
               files.size(), compiled, refused, vocab->size(), c.mean, c.p50, c.p99, wm.n, wm.mean, wm.p50, wm.p99,
               fm.mean, fm.p50, fm.p99);
  return 0;
}

}  // namespace

int cmd_grammar(int argc, char** argv) {
  ConstraintSpec spec;
  int sources = 0;
  bool check = false, bench = false;
  std::string tokenizer, dir = "tests/fixtures/constrain/jsonschemabench";
  size_t limit = SIZE_MAX;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: deepinfer grammar (--json-schema FILE | --regex PATTERN | --ebnf FILE) [--compact] --check\n"
          "       deepinfer grammar --tokenizer PATH --bench [--dir DIR] [--limit N]\n"
          "  --check  reads JSON Lines {\"text\": ...} on stdin and writes {\"valid\": true|false} per line:\n"
          "           whether the grammar accepts the text's bytes as a complete match. A grammar the\n"
          "           compiler refuses prints one {\"error\": ...} line and exits 2.\n"
          "  --compact  JSON Schema: no whitespace between JSON tokens (default: short runs allowed)\n"
          "  --bench  compiles every JSON Schema file in DIR (JSONSchemaBench/MaskBench form: {\"schema\",\n"
          "           \"tests\": [{\"data\", \"valid\"}]}; default %s) and times the per-token\n"
          "           mask while walking each valid instance tokenized by PATH (a model directory or a\n"
          "           tokenizer.json). Prints one JSON line (compile and mask mean/p50/p99 in us).\n",
          dir.c_str());
      return 0;
    }
    if (a == "--json-schema" && has_value) {
      if (!read_file(argv[++i], &spec.source)) return usage_error(std::string("--json-schema: cannot read ") + argv[i]);
      spec.kind = ConstraintKind::kJsonSchema;
      ++sources;
    } else if (a == "--regex" && has_value) {
      spec.source = argv[++i];
      spec.kind = ConstraintKind::kRegex;
      ++sources;
    } else if (a == "--ebnf" && has_value) {
      if (!read_file(argv[++i], &spec.source)) return usage_error(std::string("--ebnf: cannot read ") + argv[i]);
      spec.kind = ConstraintKind::kEbnf;
      ++sources;
    } else if (a == "--compact") {
      spec.json.whitespace = JsonWhitespace::kCompact;
    } else if (a == "--check") {
      check = true;
    } else if (a == "--bench") {
      bench = true;
    } else if (a == "--tokenizer" && has_value) {
      tokenizer = argv[++i];
    } else if (a == "--dir" && has_value) {
      dir = argv[++i];
    } else if (a == "--limit" && has_value) {
      limit = std::strtoull(argv[++i], nullptr, 10);
    } else {
      return usage_error("unexpected argument '" + a + "'");
    }
  }
  if (check == bench) return usage_error("give exactly one of --check and --bench");
  if (check) {
    if (sources != 1) return usage_error("--check needs exactly one of --json-schema, --regex, --ebnf");
    return run_check(spec);
  }
  if (tokenizer.empty()) return usage_error("--bench needs --tokenizer PATH");
  return run_bench(tokenizer, dir, limit);
}

}  // namespace di::cli
