// The recipe_* keys of di_options → recipe::RecipeConfig (di_recipe_create's settings). Reads
// and validates values only; naming each bad key in its error. Loads no files.
#pragma once

#include "base/status.h"
#include "capi/src/options.h"
#include "recipe/prepare/prepare.h"

namespace di::capi {

// Fills `config` from the recipe_* keys of `options` (NULL: defaults). kInvalidArgument names
// the key (and the element of a list) with a bad value.
// `default_model`: the served name when recipe_model is not set.
Status read_recipe_config(const di_options* options, recipe::RecipeConfig& config,
                          const std::string& default_model = "deepseek-v4");

}  // namespace di::capi
