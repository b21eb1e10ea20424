// ApiError bodies in each protocol's wire format. The shapes are OpenAI's documented error
// object and Anthropic's error envelope; nothing here knows which request field failed.
#include "recipe/protocol/api_error.h"

namespace di::recipe {
namespace {

using json = nlohmann::json;

std::string openai_type(int status) {
  if (status >= 500) return "internal_error";
  if (status == 401) return "authentication_error";
  if (status == 403) return "permission_error";
  if (status == 429) return "rate_limit_error";
  return "invalid_request_error";  // OpenAI uses it for 400 and 404 alike
}

std::string anthropic_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

ApiError make(Protocol protocol, int status, std::string code, std::string param,
              std::string message) {
  ApiError e;
  e.protocol = protocol;
  e.http_status = status;
  e.type = protocol == Protocol::kMessages ? anthropic_type(status) : openai_type(status);
  e.code = std::move(code);
  e.param = std::move(param);
  e.message = std::move(message);
  return e;
}

}  // namespace

json ApiError::body() const {
  if (protocol == Protocol::kMessages) {
    return json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  }
  json err = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (!param.empty()) err["param"] = param;
  if (!code.empty()) err["code"] = code;
  return json{{"error", std::move(err)}};
}

json ApiError::detail() const { return json{{"status", http_status}, {"body", body()}}; }

Status ApiError::to_status() const {
  StatusCode sc = StatusCode::kInvalidArgument;
  if (http_status == 404) sc = StatusCode::kNotFound;
  else if (http_status == 413 || code == "context_length_exceeded") sc = StatusCode::kLimit;
  else if (http_status >= 500) sc = StatusCode::kInternal;
  std::string m = param.empty() || message.rfind(param, 0) == 0 ? message : param + ": " + message;
  return Status(sc, std::move(m), detail().dump());
}

ApiError ApiError::bad_request(Protocol protocol, std::string param, std::string message) {
  return make(protocol, 400, "", std::move(param), std::move(message));
}

ApiError ApiError::model_not_found(Protocol protocol, std::string_view model) {
  std::string msg = "The model `" + std::string(model) + "` does not exist or you do not have access to it.";
  if (protocol == Protocol::kMessages) msg = "model: " + std::string(model);
  return make(protocol, 404, "model_not_found", "model", std::move(msg));
}

ApiError ApiError::context_length_exceeded(Protocol protocol, std::string message) {
  return make(protocol, 400, "context_length_exceeded", "messages", std::move(message));
}

ApiError ApiError::internal(Protocol protocol, std::string message) {
  return make(protocol, 500, "", "", std::move(message));
}

ApiError api_error_from_status(Protocol protocol, const Status& status) {
  if (!status.detail().empty()) {
    json d = json::parse(status.detail(), nullptr, /*allow_exceptions=*/false);
    if (d.is_object() && d.contains("status") && d["status"].is_number_integer() &&
        d.contains("body") && d["body"].is_object()) {
      const json& b = d["body"];
      const json& e = b.contains("error") && b["error"].is_object() ? b["error"] : json::object();
      ApiError out;
      out.protocol = protocol;
      out.http_status = d["status"].get<int>();
      auto str = [&](const char* k) {
        return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string();
      };
      out.type = str("type");
      out.code = str("code");
      out.param = str("param");
      out.message = str("message");
      if (!out.message.empty()) {
        // Re-type for the asked protocol: the same failure may be rendered for another API.
        out.type = protocol == Protocol::kMessages ? anthropic_type(out.http_status)
                                                   : openai_type(out.http_status);
        return out;
      }
    }
  }
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kParse:
    case StatusCode::kUnsupported:
      return ApiError::bad_request(protocol, "", status.message());
    case StatusCode::kNotFound: return make(protocol, 404, "", "", status.message());
    case StatusCode::kLimit: return make(protocol, 400, "", "", status.message());
    case StatusCode::kPermission: return make(protocol, 403, "", "", status.message());
    default: return ApiError::internal(protocol, status.message());
  }
}

}  // namespace di::recipe
