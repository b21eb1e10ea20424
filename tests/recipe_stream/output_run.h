// What the output-parser tests do after pushing a model's output: end it the way the engine ends
// a finished request, and take the non-streaming body. Header-only, for the test binaries.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/protocol/output_parser.h"

namespace di::recipe::testing {

// Pushes the kStop chunk the engine ends a request with (its events to *events); the response body.
inline nlohmann::json stop_and_respond(OutputParser& parser, std::vector<SseEvent>* events) {
  OutputChunk last;
  last.finish = OutputFinish::kStop;
  parser.push(last, events);
  return parser.response();
}

}  // namespace di::recipe::testing
