// Small pieces every handler uses: sending an ApiError or a JSON body, and the C ABI protocol
// number of a recipe protocol. No routing, no policy.
#pragma once

#include "server/http/http_message.h"

#include <string>

#include "recipe/protocol/api_error.h"

namespace di::server {

void send_json(HttpResponse& res, int status, const std::string& body);
void send_error(HttpResponse& res, const recipe::ApiError& error);
int32_t c_protocol(recipe::Protocol protocol);

}  // namespace di::server
