// Response helpers.
#include "server/http_util.h"

#include "server/server_state.h"

namespace di::server {

void send_json(HttpResponse& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void send_error(HttpResponse& res, const ApiError& error) {
  current_trace().error = error.message;
  if (current_trace().outcome.empty()) current_trace().outcome = "rejected";
  send_json(res, error.http_status, error.body().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace di::server
