// `deepinfer serve`: the OpenAI- and Anthropic-compatible HTTP server on one model folder.
// Parses flags into a ServerConfig and runs di::server::HttpServer until SIGINT/SIGTERM; the
// server itself lives in server/.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/http_server.h"
#include "tools/cli/commands.h"
#include "tools/cli/engine_session.h"
#include "tools/cli/tiny_model.h"

namespace di::cli {
namespace {

void usage() {
  std::printf(
      "usage: deepinfer serve [--model DIR] [--host 127.0.0.1] [--port 8000] [--api-key KEY]...\n"
      "                       [--served-model-name NAME]... [--encoding FORMAT]\n"
      "                       [--max-body-bytes N] [--read-timeout S] [--write-timeout S]\n"
      "                       [--request-timeout S] [--header-timeout S] [--shutdown-timeout S]\n"
      "                       [--max-connections N] [--max-connections-per-client N] [--workers N]\n"
      "                       [--max-header-bytes N] [--max-headers N]\n"
      "                       [--max-requests-per-connection N] [--allowed-host HOST]...\n"
      "                       [--cors-origin ORIGIN]... [engine flags]\n"
      "                       [--image-policy unsupported|reject|vision] [--no-remote-images]\n"
      "                       [--image-allow-destination CIDR|HOST:PORT]...\n"
      "  Serves POST /v1/chat/completions, /v1/responses, /v1/messages (streamed with\n"
      "  \"stream\": true), GET /v1/models, /health and /metrics (Prometheus).\n"
      "  --model defaults to %s (the bundled tiny model: random weights, gibberish replies).\n"
      "  --port 0 picks a free port (the \"listening\" log line names it). With --api-key (or\n"
      "  DEEPINFER_API_KEY) every /v1 route needs `Authorization: Bearer KEY` or `x-api-key: KEY`.\n"
      "  --served-model-name: the names clients send as \"model\" (default: the folder's name).\n"
      "  Defaults: --max-body-bytes 8388608 --read-timeout 30 --write-timeout 30\n"
      "            --request-timeout 600 --header-timeout 10 --shutdown-timeout 10\n"
      "            --max-connections 1024 --max-connections-per-client 128 --workers 256\n"
      "            --max-header-bytes 32768 --max-headers 100 --max-requests-per-connection 1000.\n"
      "  Logs: JSON lines on stderr.\n"
      "  limits:   every one is checked before the body is read. --max-body-bytes counts the\n"
      "            body after de-chunking (413); Content-Encoding other than identity is a 415.\n"
      "            The whole request head must arrive within --header-timeout, the whole body\n"
      "            within --read-timeout (408). A connection waiting for its head holds no worker;\n"
      "            --workers requests run at once. POST without Content-Length or chunked: 411.\n"
      "  --write-timeout also drops a streaming client that reads nothing for that long.\n"
      "  --encoding: the prompt format, dsv4, dsv41, dsv32 or chat_template (the model's own Jinja\n"
      "            template); default: chat_template for a directory that ships one and is not\n"
      "            DeepSeek (Llama, Qwen), dsv4 otherwise.\n"
      "  --shutdown-timeout: on SIGINT/SIGTERM requests in flight get this long, then are cut.\n"
      "  Without --api-key: the Host must be loopback (localhost, 127.0.0.0/8, ::1) or listed\n"
      "            with --allowed-host, requests with an Origin (web pages) are refused unless\n"
      "            listed with --cors-origin (then answered with CORS headers), and the JSON\n"
      "            routes need Content-Type: application/json (415).\n"
      "  images:   --image-policy unsupported (default: the model sees a placeholder), reject\n"
      "            (400) or vision (needs --encoding dsv41 and a vision model). Vision fetches\n"
      "            http(s) image URLs through a filter that refuses loopback, private and\n"
      "            link-local addresses unless --image-allow-destination lets one through;\n"
      "            --no-remote-images refuses URLs (data URLs and base64 only).\n"
      "  engine:   --threads N --max-model-len N --max-num-seqs N --max-num-batched-tokens N\n"
      "            --kv-cache-bytes N --block-size N --deterministic --no-prefix-caching\n"
      "            --constraint-max-compile-work N (structured-output compile budget; 0 = none)\n"
      "            --speculative-tokens N (MTP speculative decoding, drafts of up to N tokens;\n"
      "            0 = off) --speculative-fixed (always verify N; default: variable length)\n"
      "            --device cpu|cuda|auto (default auto) --gpu-memory-utilization F (default 0.9)\n"
      "            --gpu-memory-limit-bytes N (CUDA: cap on the model's device bytes; default 0 = none)\n"
      "  parallel: --tensor-parallel-size N --expert-parallel-size N --data-parallel-size N\n"
      "            --parallel-rank N --parallel-world-size N --nccl-rendezvous file:PATH|HOST:PORT\n"
      "            --dp-vote all|any --eplb --eplb-rebalance-interval N --eplb-redundant-experts N\n"
      "            (above one process: not built yet, refused at start)\n"
      "  logging:  --log-level error|warn|info|debug (the engine's records, as the server's JSON\n"
      "            lines {\"event\": \"engine\", \"message\"} on standard error; default info)\n",
      default_tiny_model_dir().c_str());
}

bool parse_number(const std::string& flag, const std::string& v, double lo, double hi, double* out) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(d >= lo && d <= hi)) {
    std::fprintf(stderr, "deepinfer serve: %s: expected a number in [%g, %g], got '%s'\n", flag.c_str(), lo, hi, v.c_str());
    return false;
  }
  *out = d;
  return true;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  server::ServerConfig config;
  config.model_dir = default_tiny_model_dir();
  nlohmann::json sampling = nlohmann::json::object();
  if (const char* k = std::getenv("DEEPINFER_API_KEY"); k && *k) config.api_keys.push_back(k);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    if (parse_common_switch(a, sampling, config.engine_options)) continue;
    if (a == "--no-remote-images") {
      config.image_allow_remote = false;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "deepinfer serve: %s needs a value (see --help)\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    double d = 0;
    if (a == "--model") config.model_dir = v;
    else if (a == "--host") config.host = v;
    else if (a == "--port") { if (!parse_number(a, v, 0, 65535, &d)) return 2; config.port = static_cast<int>(d); }
    else if (a == "--api-key") config.api_keys.push_back(v);
    else if (a == "--served-model-name") config.served_model_names.push_back(v);
    else if (a == "--encoding") config.encoding = v;
    else if (a == "--image-policy") config.image_policy = v;
    else if (a == "--image-allow-destination") config.image_allow_destinations.push_back(v);
    else if (a == "--max-body-bytes") { if (!parse_number(a, v, 1024, 1e12, &d)) return 2; config.limits.max_body_bytes = static_cast<size_t>(d); }
    else if (a == "--read-timeout") { if (!parse_number(a, v, 1, 3600, &d)) return 2; config.limits.read_timeout_s = static_cast<int>(d); }
    else if (a == "--write-timeout") { if (!parse_number(a, v, 1, 3600, &d)) return 2; config.limits.write_timeout_s = static_cast<int>(d); }
    else if (a == "--request-timeout") { if (!parse_number(a, v, 0.001, 86400, &d)) return 2; config.limits.request_timeout_s = d; }
    else if (a == "--max-connections") { if (!parse_number(a, v, 4, 65536, &d)) return 2; config.limits.max_connections = static_cast<int>(d); }
    else if (a == "--max-connections-per-client") { if (!parse_number(a, v, 1, 65536, &d)) return 2; config.limits.max_connections_per_client = static_cast<int>(d); }
    else if (a == "--workers") { if (!parse_number(a, v, 1, 4096, &d)) return 2; config.limits.workers = static_cast<int>(d); }
    else if (a == "--header-timeout") { if (!parse_number(a, v, 1, 3600, &d)) return 2; config.limits.header_timeout_s = static_cast<int>(d); }
    else if (a == "--shutdown-timeout") { if (!parse_number(a, v, 0, 3600, &d)) return 2; config.limits.shutdown_timeout_s = d; }
    else if (a == "--max-header-bytes") { if (!parse_number(a, v, 1024, 1 << 24, &d)) return 2; config.limits.max_header_bytes = static_cast<size_t>(d); }
    else if (a == "--max-headers") { if (!parse_number(a, v, 8, 10000, &d)) return 2; config.limits.max_headers = static_cast<int>(d); }
    else if (a == "--max-requests-per-connection") { if (!parse_number(a, v, 1, 1e9, &d)) return 2; config.limits.max_requests_per_connection = static_cast<int>(d); }
    else if (a == "--allowed-host") config.allowed_hosts.push_back(v);
    else if (a == "--cors-origin") config.cors_origins.push_back(v);
    else {
      bool consumed = false;
      std::string error;
      if (!parse_common_flag(a, v, sampling, config.engine_options, &consumed, &error)) {
        std::fprintf(stderr, "deepinfer serve: %s\n", error.c_str());
        return 2;
      }
      if (a == "--log-level")
        config.log_level = v == "error" ? DI_LOG_ERROR : v == "warn" ? DI_LOG_WARN : v == "info" ? DI_LOG_INFO : DI_LOG_DEBUG;
      if (!consumed) {
        std::fprintf(stderr, "deepinfer serve: unknown option '%s' (see --help)\n", a.c_str());
        return 2;
      }
    }
  }
  if (!sampling.empty()) {
    std::fprintf(stderr, "deepinfer serve: sampling flags (%s) come from each request, not the command line\n",
                 sampling.dump().c_str());
    return 2;
  }

  // SIGINT/SIGTERM go to one waiting thread (blocked everywhere else, before any thread starts)
  // so shutdown runs outside a signal handler. A client that vanishes must not kill the process
  // through SIGPIPE: writes fail with EPIPE instead and cancel that request.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (Status st = check_default_model(config.model_dir); !st.is_ok()) {
    std::fprintf(stderr, "deepinfer serve: %s\n", st.message().c_str());
    return 1;
  }
  auto srv = server::HttpServer::create(std::move(config));
  if (!srv.is_ok()) {
    std::fprintf(stderr, "deepinfer serve: %s\n", srv.status().message().c_str());
    return srv.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  auto port = (*srv)->bind();
  if (!port.is_ok()) {
    std::fprintf(stderr, "deepinfer serve: %s\n", port.status().message().c_str());
    return 1;
  }
  server::HttpServer* server = srv->get();
  std::thread waiter([&stop_signals, server] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server->stop();
  });
  const Status st = server->serve();
  if (!st.is_ok()) {
    std::fprintf(stderr, "deepinfer serve: %s\n", st.message().c_str());
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    return 1;
  }
  waiter.join();
  return 0;
}

}  // namespace di::cli
