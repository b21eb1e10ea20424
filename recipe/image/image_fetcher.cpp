// fetch_image over libcurl. The destination check lives in CURLOPT_OPENSOCKETFUNCTION, which
// libcurl calls with the resolved address for every connection it opens (each happy-eyeballs
// attempt and each redirect hop), so there is no window between the check and the connect.
#include "recipe/image/image_fetcher.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

namespace di::recipe::image {
namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const FetchOptions* options = nullptr;
  ImageByteBudget* budget = nullptr;
  std::string field;
  CURL* curl = nullptr;
  Bytes body;
  size_t reserved = 0;  // bytes taken from the budget for this image
  bool discard = false;  // a redirect or error response: its body is not the image
  bool status_known = false;
  Status failure;       // why a callback stopped the transfer
};

curl_socket_t open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* addr) {
  auto* t = static_cast<Transfer*>(clientp);
  if (purpose != CURLSOCKTYPE_IPCXN) {
    t->failure = Status::permission(t->field + ": unexpected connection type");
    return CURL_SOCKET_BAD;
  }
  uint16_t port = 0;
  const auto ip = IpAddress::from_sockaddr(&addr->addr, &port);
  if (!ip) {
    t->failure = Status::permission(t->field + ": destination is not an IP address");
    return CURL_SOCKET_BAD;
  }
  Status allowed = t->options->policy.check(*ip, port);
  if (!allowed.is_ok()) {
    // Keep the first refusal: with several addresses libcurl tries each, and all refusals
    // read alike.
    if (t->failure.is_ok()) t->failure = std::move(allowed).with_context(t->field);
    return CURL_SOCKET_BAD;
  }
  return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

size_t on_body(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nmemb;
  if (!t->status_known) {
    long code = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
    t->discard = code < 200 || code >= 300;
    t->status_known = true;
  }
  if (t->discard) return n;
  if (t->body.size() + n > t->budget->max_image_bytes()) {
    t->failure = Status::limit(t->field + ": image exceeds " +
                               std::to_string(t->budget->max_image_bytes()) + " bytes");
    return 0;
  }
  Status s = t->budget->reserve(n, t->field);
  if (!s.is_ok()) {
    t->failure = std::move(s);
    return 0;
  }
  t->reserved += n;
  t->body.insert(t->body.end(), data, data + n);
  return n;
}

// Runs one transfer on a multi handle, waking at least every 50 ms to poll `cancel`, so a
// cancelled request stops promptly even while the server is silent.
CURLcode perform(CURLM* multi, CURL* c, const CancelFn& cancel, bool* cancelled) {
  curl_multi_add_handle(multi, c);
  CURLcode rc = CURLE_OK;
  int running = 1;
  while (true) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) {
      rc = CURLE_OUT_OF_MEMORY;
      break;
    }
    if (running == 0) break;
    if (cancel && cancel()) {
      *cancelled = true;
      break;
    }
    if (curl_multi_poll(multi, nullptr, 0, 50, nullptr) != CURLM_OK) {
      rc = CURLE_OUT_OF_MEMORY;
      break;
    }
  }
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == c) rc = msg->data.result;
  }
  curl_multi_remove_handle(multi, c);
  return rc;
}

bool is_http_or_https(std::string_view url) {
  auto lower_prefix = [&](std::string_view p) {
    if (url.size() < p.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
      char c = url[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != p[i]) return false;
    }
    return true;
  };
  return lower_prefix("http://") || lower_prefix("https://");
}

std::string clip(std::string_view url) {
  return url.size() <= 200 ? std::string(url) : std::string(url.substr(0, 200)) + "...";
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};

}  // namespace

Result<Bytes> fetch_image(std::string_view url, const FetchOptions& options,
                          ImageByteBudget& budget, std::string_view field,
                          const CancelFn& cancel) {
  init_curl_once();
  Transfer t;
  t.options = &options;
  t.budget = &budget;
  t.field = std::string(field);
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Status::out_of_memory(t.field + ": cannot create an HTTP client");
  std::unique_ptr<CURLM, CurlMultiDeleter> multi(curl_multi_init());
  if (!multi) return Status::out_of_memory(t.field + ": cannot create an HTTP client");
  t.curl = curl.get();
  CURL* c = curl.get();

  // Whatever happens below, a failed fetch gives its reservation back.
  auto fail = [&](Status s) -> Result<Bytes> {
    budget.release(t.reserved);
    return s;
  };

  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // ignore http_proxy & co.
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(budget.max_image_bytes()));
  curl_easy_setopt(c, CURLOPT_USERAGENT, options.user_agent.c_str());

  const auto start = std::chrono::steady_clock::now();
  std::string current(url);
  for (int hop = 0;; ++hop) {
    if (!is_http_or_https(current)) {
      return fail(Status::invalid_argument(t.field + ": image URL must be http or https, got '" +
                                           clip(current) + "'"));
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start).count();
    const int64_t left = options.total_timeout_ms - elapsed;
    if (left <= 0) {
      return fail(Status::io(t.field + ": fetching " + clip(url) + " timed out after " +
                             std::to_string(options.total_timeout_ms) + " ms"));
    }
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(left));
    curl_easy_setopt(c, CURLOPT_URL, current.c_str());
    t.status_known = false;
    t.discard = false;

    bool cancelled = false;
    const CURLcode rc = perform(multi.get(), c, cancel, &cancelled);
    if (cancelled) return fail(Status::cancelled(t.field + ": fetch cancelled"));
    if (!t.failure.is_ok()) return fail(std::move(t.failure));
    if (rc == CURLE_FILESIZE_EXCEEDED) {
      return fail(Status::limit(t.field + ": image exceeds " +
                                std::to_string(budget.max_image_bytes()) + " bytes"));
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return fail(Status::io(t.field + ": fetching " + clip(current) + " timed out"));
    }
    if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
      return fail(Status::invalid_argument(t.field + ": invalid image URL '" + clip(current) +
                                           "': " + curl_easy_strerror(rc)));
    }
    if (rc != CURLE_OK) {
      return fail(Status::io(t.field + ": fetching " + clip(current) + " failed: " +
                             curl_easy_strerror(rc)));
    }
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code == 301 || code == 302 || code == 303 || code == 307 || code == 308) {
      char* next = nullptr;
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &next);
      if (next == nullptr) {
        return fail(Status::invalid_argument(t.field + ": HTTP " + std::to_string(code) +
                                             " redirect without a Location from " +
                                             clip(current)));
      }
      if (hop >= options.max_redirects) {
        return fail(Status::invalid_argument(t.field + ": more than " +
                                             std::to_string(options.max_redirects) +
                                             " redirects fetching " + clip(url)));
      }
      current = next;
      continue;
    }
    if (code < 200 || code >= 300) {
      // A 4xx means the client's URL is wrong (a 400 for the request); a 5xx may pass (retryable).
      std::string msg = t.field + ": fetching " + clip(current) + " returned HTTP " +
                        std::to_string(code);
      return fail(code >= 500 ? Status::io(std::move(msg))
                              : Status::invalid_argument(std::move(msg)));
    }
    if (t.body.empty()) return fail(Status::invalid_argument(t.field + ": empty image"));
    return std::move(t.body);
  }
}

}  // namespace di::recipe::image
