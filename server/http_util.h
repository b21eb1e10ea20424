// Small pieces every handler uses: sending an ApiError or a JSON body, and the C ABI protocol
// number of a recipe protocol. No routing, no policy.
#pragma once

#include <httplib.h>

#include <string>

#include "recipe/protocol/api_error.h"

namespace di::server {

void send_json(httplib::Response& res, int status, const std::string& body);
void send_error(httplib::Response& res, const recipe::ApiError& error);
int32_t c_protocol(recipe::Protocol protocol);

}  // namespace di::server
