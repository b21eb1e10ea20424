// Model-name resolution for the recipe (not part of the public deepseek-recipe, which echoes any
// name: here a deployment says which names it answers to).
#include "recipe/protocol/model_aliases.h"

#include <filesystem>

#include "recipe/protocol/api_error.h"

namespace di::recipe {

ModelAliases::ModelAliases(std::string served_model, std::map<std::string, std::string> aliases)
    : served_(std::move(served_model)), aliases_(std::move(aliases)) {
  for (auto& [alias, target] : aliases_)
    if (target.empty()) target = served_;
}

std::map<std::string, std::string> ModelAliases::default_aliases() {
  // Names clients of DeepSeek's hosted API send; "" = the served model.
  return {{"deepseek-v4", ""},
          {"deepseek-chat", ""},      {"deepseek-reasoner", ""},  {"deepseek-v3.2", ""},
          {"deepseek-v4-flash", ""},  {"deepseek-v4-pro", ""},    {"deepseek-v4.1-flash", ""}};
}

std::string ModelAliases::name_for_model_path(const std::string& path) {
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  if (p.has_extension() && p.extension() == ".json") p = p.parent_path();  // .../tokenizer.json
  std::string name = p.filename().string();
  if (name.empty() || name == ".") name = p.parent_path().filename().string();  // "models/tiny-v4/"
  if (name.empty() || name == "." || name == "..") name = "deepseek-v4";
  return name;
}

Result<ModelAliases> ModelAliases::from_json(const std::string& served_model,
                                             const nlohmann::json& aliases) {
  if (served_model.empty()) return Status::invalid_argument("recipe_model: must not be empty");
  std::map<std::string, std::string> m;
  if (aliases.is_null()) return ModelAliases(served_model);
  if (aliases.is_array()) {
    for (const auto& a : aliases) {
      if (!a.is_string() || a.get<std::string>().empty())
        return Status::invalid_argument("recipe_model_aliases: expected non-empty strings, got " + a.dump());
      m[a.get<std::string>()] = served_model;
    }
  } else if (aliases.is_object()) {
    for (const auto& [k, v] : aliases.items()) {
      if (k.empty() || !v.is_string())
        return Status::invalid_argument("recipe_model_aliases." + k +
                                        ": expected the served model name (a string), got " + v.dump());
      m[k] = v.get<std::string>();
    }
  } else {
    return Status::invalid_argument(
        "recipe_model_aliases: expected an object {\"alias\": \"model\"} or an array of names, got " +
        aliases.dump());
  }
  return ModelAliases(served_model, std::move(m));
}

Result<std::string> ModelAliases::resolve(Protocol protocol, const std::string& requested) const {
  if (requested == served_) return served_;
  auto it = aliases_.find(requested);
  if (it != aliases_.end()) return it->second;
  return ApiError::model_not_found(protocol, requested).to_status();
}

}  // namespace di::recipe
