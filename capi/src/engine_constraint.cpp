// EngineGrammars and the di_options → ConstraintSpec translation.
#include "capi/src/engine_constraint.h"

#include <string>

#include <nlohmann/json.hpp>

#include "capi/src/constraint_vocabulary.h"
#include "capi/src/options.h"
#include "engine/constrain/special_tokens.h"
#include "engine/constrain/matcher_constraint.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::capi {

using engine::constrain::ConstraintKind;
using engine::constrain::ConstraintSpec;
using engine::constrain::JsonWhitespace;

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

}  // namespace di::capi
