// EngineGrammars and the option / prepared-request → ConstraintSpec translation.
#include "capi/src/engine_constraint.h"

#include <string>

#include <nlohmann/json.hpp>

#include "capi/src/constraint_vocabulary.h"
#include "capi/src/options.h"
#include "engine/constrain/control_tokens.h"
#include "engine/constrain/matcher_constraint.h"
#include "recipe/encoding/dsml.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::capi {
namespace {

using engine::constrain::ConstraintKind;
using engine::constrain::ConstraintSpec;
using engine::constrain::JsonWhitespace;
using ojson = nlohmann::ordered_json;

ojson parse_accessor(const char* text, size_t len, const char* what) {
  ojson j = ojson::parse(std::string(text, len), nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(std::string("prepared: ") + what + " is not JSON");
  return j;
}

}  // namespace

EngineGrammars::EngineGrammars(std::shared_ptr<const recipe::Tokenizer> tokenizer, int64_t logits_width,
                               std::vector<int32_t> eos_ids, const engine::constrain::GrammarLimits& limits)
    : tokenizer_(std::move(tokenizer)), logits_width_(logits_width), eos_ids_(std::move(eos_ids)), limits_(limits) {}

Result<std::shared_ptr<engine::constrain::GrammarCompiler>> EngineGrammars::compiler() {
  std::lock_guard<std::mutex> l(mu_);
  if (compiler_) return compiler_;
  if (!tokenizer_)
    return Status::invalid_argument(
        "constraint: structured output needs the model's tokenizer.json, and the model directory has none");
  engine::constrain::ModelTokens t = model_tokens_from_tokenizer(*tokenizer_, logits_width_, eos_ids_);
  auto vocab = engine::constrain::model_vocabulary(std::move(t));
  if (!vocab.is_ok()) return Status(vocab.status()).with_context("constraint vocabulary");
  compiler_ = std::make_shared<engine::constrain::GrammarCompiler>(
      std::make_shared<const engine::constrain::TokenVocabulary>(std::move(vocab).value()), 256, limits_);
  return compiler_;
}

Result<std::unique_ptr<engine::TokenConstraint>> EngineGrammars::make(const ConstraintSpec& spec) {
  DI_ASSIGN_OR_RETURN(std::shared_ptr<engine::constrain::GrammarCompiler> c, compiler());
  return engine::constrain::make_token_constraint(*c, spec);
}

Result<std::optional<ConstraintSpec>> constraint_from_options(const di_options* options) {
  if (!options) return std::optional<ConstraintSpec>();
  std::optional<ConstraintSpec> spec;
  std::string first;
  auto take = [&](const char* key, ConstraintKind kind) -> Status {
    auto it = options->values.find(key);
    if (it == options->values.end()) return Status::ok();
    if (spec)
      return Status::invalid_argument(std::string(key) + ": only one constraint per request, and " + first +
                                      " is set too");
    first = key;
    ConstraintSpec s;
    s.kind = kind;
    if (kind == ConstraintKind::kJsonObject) {
      const int64_t v = std::get<int64_t>(it->second.v);
      if (v != 0 && v != 1) return Status::invalid_argument(std::string(key) + ": expected 0 or 1, got " + std::to_string(v));
      if (v == 0) return Status::ok();
    } else if (kind == ConstraintKind::kJsonSchema) {
      const nlohmann::json& j = std::get<nlohmann::json>(it->second.v);
      if (!j.is_object() && !j.is_boolean())
        return Status::invalid_argument(std::string(key) + ": expected a JSON Schema (an object or a boolean), got " + j.dump());
      s.source = it->second.text;
    } else {
      s.source = std::get<std::string>(it->second.v);
    }
    spec = std::move(s);
    return Status::ok();
  };
  DI_RETURN_IF_ERROR(take("constraint_json_schema", ConstraintKind::kJsonSchema));
  DI_RETURN_IF_ERROR(take("constraint_json_object", ConstraintKind::kJsonObject));
  DI_RETURN_IF_ERROR(take("constraint_regex", ConstraintKind::kRegex));
  DI_RETURN_IF_ERROR(take("constraint_ebnf", ConstraintKind::kEbnf));
  auto ws = options->values.find("constraint_json_whitespace");
  if (ws != options->values.end()) {
    const std::string& w = std::get<std::string>(ws->second.v);
    if (w != "flexible" && w != "compact")
      return Status::invalid_argument("constraint_json_whitespace: expected \"flexible\" or \"compact\", got \"" + w + "\"");
    if (spec) spec->json.whitespace = w == "compact" ? JsonWhitespace::kCompact : JsonWhitespace::kFlexible;
  }
  return spec;
}

Result<std::optional<ConstraintSpec>> constraint_from_prepared(const di_prepared* prepared) {
  size_t len = 0;
  const char* text = di_prepared_constraint_json(prepared, &len);
  const ojson constraint = parse_accessor(text, len, "constraint");
  text = di_prepared_parser_options_json(prepared, &len);
  const ojson parser = parse_accessor(text, len, "parser options");
  text = di_prepared_info_json(prepared, &len);
  const ojson info = parse_accessor(text, len, "info");

  const std::string type = constraint.value("type", "none");
  const bool parse_tools = parser.value("parse_tool_calls", false);
  const ojson tools = parser.contains("tools") && parser["tools"].is_array() ? parser["tools"] : ojson::array();
  bool strict_tool = false;
  for (const ojson& t : tools) strict_tool = strict_tool || (t.is_object() && t.value("strict", false));
  const bool opened_calls = parse_tools && parser.value("prompt_opened_tool_calls", false);
  const bool parallel = parser.value("parallel_tool_calls", true);
  // Tools need the grammar when their arguments must follow a schema (strict), when the prompt
  // forced a call (unconstrained, a model may write anything inside the opened block and the
  // output would parse to nothing), and when only one call is allowed.
  const bool tools_constrained = parse_tools && (strict_tool || opened_calls || !parallel);
  if (type == "none" && !tools_constrained) return std::optional<ConstraintSpec>();

  ojson spec = ojson::object();
  spec["reasoning"] = parser.value("prompt_opened_thinking", false) && !opened_calls;
  if (type == "json_object") {
    spec["content"] = {{"type", "json_object"}};
  } else if (type == "json_schema") {
    spec["content"] = {{"type", "json_schema"}, {"schema", constraint.contains("schema") ? constraint["schema"] : ojson::object()},
                       {"strict", constraint.value("strict", false)}};
  } else if (type == "none") {
    spec["content"] = {{"type", "text"}};
  } else {
    return Status::unsupported("prepared: constraint type \"" + type + "\" is not known to this engine");
  }
  spec["tool_calls"] = !parse_tools ? "none" : opened_calls ? "required" : "auto";
  if (parse_tools) {
    ojson list = ojson::array();
    for (const ojson& t : tools) {
      if (!t.is_object()) continue;
      list.push_back({{"name", t.value("name", "")},
                      {"parameters", t.contains("parameters") ? t["parameters"] : ojson::object()},
                      {"strict", t.value("type", "function") == "function" && t.value("strict", false)}});
    }
    spec["tools"] = std::move(list);
    spec["parallel"] = parallel;
    const std::string encoding = info.value("encoding", "dsv4");
    const recipe::DsmlTags tags = encoding == "dsv32" ? recipe::dsml_tags_v32() : recipe::dsml_tags_v4(encoding == "dsv41");
    spec["markup"] = {{"block", tags.block}, {"invoke", tags.invoke}, {"parameter", tags.parameter}};
  }
  ConstraintSpec s;
  s.kind = ConstraintKind::kChatOutput;
  s.source = spec.dump();
  // Small whitespace runs: the model writes JSON compactly or pretty-printed, never pages of blanks.
  s.json.whitespace = JsonWhitespace::kFlexible;
  s.json.max_whitespace = 16;
  return std::optional<ConstraintSpec>(std::move(s));
}

}  // namespace di::capi
