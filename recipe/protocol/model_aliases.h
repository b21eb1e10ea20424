// ModelAliases: which request `model` names this recipe serves, and the served model each one
// resolves to. An unknown name is a 404 model_not_found. Configured once per recipe.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/protocol/protocol.h"

namespace di::recipe {

class ModelAliases {
 public:
  // Serves `served_model` under its own name plus `aliases` (alias → served name; an alias may
  // name another served model of the same deployment).
  explicit ModelAliases(std::string served_model = "deepseek-v4",
                        std::map<std::string, std::string> aliases = default_aliases());
  // {"alias": "served", ...} or ["alias", ...] (each resolving to the served model).
  static Result<ModelAliases> from_json(const std::string& served_model,
                                        const nlohmann::json& aliases);
  // DeepSeek's public model names and "deepseek-v4" (the name a recipe without a model
  // directory serves), all resolving to the served model.
  static std::map<std::string, std::string> default_aliases();
  // The default served name of a model directory (or of the directory holding a tokenizer.json
  // file): its folder's name, as `deepinfer serve` names the model it serves.
  static std::string name_for_model_path(const std::string& path);

  // The served model for `requested`, or the protocol's 404 model_not_found as a Status.
  Result<std::string> resolve(Protocol protocol, const std::string& requested) const;
  const std::string& served_model() const { return served_; }
  const std::map<std::string, std::string>& aliases() const { return aliases_; }

 private:
  std::string served_;
  std::map<std::string, std::string> aliases_;
};

}  // namespace di::recipe
