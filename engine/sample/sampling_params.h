// SamplingParams in the engine's namespace. The struct is part of the typed request seam
// (request/sampling_params.h) so that the recipe can fill it without including the engine;
// validate() is defined here, in sampling_params.cpp.
#pragma once

#include "request/sampling_params.h"

namespace di::engine {

using di::request::SamplingParams;

}  // namespace di::engine
