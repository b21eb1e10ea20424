// ServerConfig validation: every message names the flag at fault and what came.
#include "server/server_config.h"

#include <filesystem>

namespace di::server {

Status ServerConfig::validate() {
  if (model_dir.empty()) return Status::invalid_argument("--model: expected a model folder");
  if (host.empty()) return Status::invalid_argument("--host: expected an address");
  if (port < 0 || port > 65535)
    return Status::invalid_argument("--port: expected 0..65535, got " + std::to_string(port));
  for (const std::string& k : api_keys)
    if (k.empty()) return Status::invalid_argument("--api-key: expected a non-empty key");
  if (served_model_names.empty()) {
    std::filesystem::path p(model_dir);
    std::string name = p.filename().string();
    if (name.empty()) name = p.parent_path().filename().string();  // "models/tiny-v4/"
    served_model_names.push_back(name.empty() ? "deepinfer" : name);
  }
  for (const std::string& n : served_model_names)
    if (n.empty()) return Status::invalid_argument("--served-model-name: expected a non-empty name");
  if (image_policy != "unsupported" && image_policy != "reject" && image_policy != "vision")
    return Status::invalid_argument("--image-policy: expected unsupported, reject or vision, got '" + image_policy + "'");
  if (image_policy != "vision" && (!image_allow_remote || !image_allow_destinations.empty()))
    return Status::invalid_argument("--image-allow-destination/--no-remote-images: need --image-policy vision");
  const ServerLimits& l = limits;
  if (l.max_body_bytes < 1024)
    return Status::invalid_argument("--max-body-bytes: expected >= 1024, got " + std::to_string(l.max_body_bytes));
  if (l.read_timeout_s < 1 || l.write_timeout_s < 1 || l.keep_alive_timeout_s < 1)
    return Status::invalid_argument("--read-timeout/--write-timeout: expected >= 1 second");
  if (!(l.request_timeout_s > 0))
    return Status::invalid_argument("--request-timeout: expected > 0 seconds, got " + std::to_string(l.request_timeout_s));
  if (l.max_connections < 4 || l.max_connections > 65536)
    return Status::invalid_argument("--max-connections: expected 4..65536, got " + std::to_string(l.max_connections));
  if (l.max_connections_per_client < 1 || l.max_connections_per_client > l.max_connections)
    return Status::invalid_argument("--max-connections-per-client: expected 1..--max-connections, got " +
                                    std::to_string(l.max_connections_per_client));
  if (l.workers < 1 || l.workers > 4096)
    return Status::invalid_argument("--workers: expected 1..4096, got " + std::to_string(l.workers));
  if (l.header_timeout_s < 1)
    return Status::invalid_argument("--header-timeout: expected >= 1 second, got " + std::to_string(l.header_timeout_s));
  if (l.max_header_bytes < 1024)
    return Status::invalid_argument("--max-header-bytes: expected >= 1024, got " + std::to_string(l.max_header_bytes));
  if (l.max_headers < 8)
    return Status::invalid_argument("--max-headers: expected >= 8, got " + std::to_string(l.max_headers));
  if (l.max_requests_per_connection < 1)
    return Status::invalid_argument("--max-requests-per-connection: expected >= 1, got " +
                                    std::to_string(l.max_requests_per_connection));
  if (!(l.shutdown_timeout_s >= 0))
    return Status::invalid_argument("--shutdown-timeout: expected >= 0 seconds");
  for (const std::string& h : allowed_hosts)
    if (h.empty()) return Status::invalid_argument("--allowed-host: expected a host name or address");
  for (const std::string& o : cors_origins)
    if (o.empty() || o.find("://") == std::string::npos)
      return Status::invalid_argument("--cors-origin: expected scheme://host[:port], got '" + o + "'");
  return Status::ok();
}

}  // namespace di::server
