// ParserOptions from a Prepared request: prepare() fills Prepared::parser for the request's
// protocol, prompt format, tools and stops; this is the bridge's one place to read it.
#include "recipe/stream/parser_options_from_prepared.h"

namespace di::recipe {

ParserOptions parser_options_from_prepared(const Prepared& p) { return p.parser; }

}  // namespace di::recipe
