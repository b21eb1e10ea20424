// ParserOptions from a Prepared request: the bridge from the request side (prepare) to the
// output parser. Copies fields only; control token ids come from the tokenizer, not from here.
#pragma once

#include "recipe/prepare/prepared.h"
#include "recipe/stream/parser_options.h"

namespace di::recipe {

ParserOptions parser_options_from_prepared(const Prepared& prepared);

}  // namespace di::recipe
