// The di_recipe and di_prepared handles, shared by the Recipe and Parser sections of the C ABI
// (a parser can be made from a prepared request). Data only; behaviour lives in recipe/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recipe/prepare/prepare.h"
#include "recipe/tokenizer/tokenizer.h"

struct di_recipe {
  di::recipe::RecipeConfig config;
  di::recipe::PromptTokenizer tokenizer;                  // empty: prompts only
  std::shared_ptr<const di::recipe::Tokenizer> vocab;    // the same tokenizer, or null
};

struct di_prepared {
  di::recipe::Prepared p;
  // The recipe's tokenizer (null without one): a parser made from this request decodes token
  // ids with it, which places control tokens exactly however many ids a chunk holds.
  std::shared_ptr<const di::recipe::Tokenizer> vocab;
  std::string sampling, stop, constraint, parser, images, info;
  std::vector<uint32_t> ranges;  // begin, end pairs
};
