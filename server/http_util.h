// Small pieces every handler uses: sending an ApiError or a JSON body. No routing, no policy.
#pragma once

#include "server/http/http_message.h"

#include <string>

#include "server/error_response.h"

namespace di::server {

void send_json(HttpResponse& res, int status, const std::string& body);
void send_error(HttpResponse& res, const ApiError& error);

}  // namespace di::server
