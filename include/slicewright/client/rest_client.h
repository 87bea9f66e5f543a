// RestClient speaks the Kubernetes REST API over a Transport, as client-go's rest.Client does:
// resource paths, list and watch options, the patch types, metav1.Status answers turned into
// Status values, a client-side request rate (kube-controller-manager's --kube-api-qps 20 and
// --kube-api-burst 30) and retries with jittered exponential backoff for 429 (honouring
// Retry-After up to 10 minutes), 5xx and connection failures of requests that may be repeated.
// Bodies stay JSON text: typed callers decode them with the codec. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/base/token_bucket.h"
#include "slicewright/client/transport.h"

namespace slicewright::client {

// Which collection a request addresses: core resources live under /api/v1, others under
// /apis/GROUP/VERSION.
struct ResourceRef {
  std::string group;     // "" for core
  std::string version;   // "v1"
  std::string resource;  // plural: "pods", "endpointslices", "serviceimports"
  bool namespaced = true;

  // "/api/v1/namespaces/NS/pods[/NAME[/SUBRESOURCE]]"; an empty namespace of a namespaced
  // resource addresses every namespace (list and watch).
  std::string Path(std::string_view namespace_, std::string_view name = {},
                   std::string_view subresource = {}) const;
};

// The well-known resources slicewright reads and writes.
ResourceRef PodsResource();
ResourceRef ServicesResource();
ResourceRef NodesResource();
ResourceRef NamespacesResource();
ResourceRef EndpointsResource();
ResourceRef EndpointSlicesResource();
ResourceRef EventsResource();
ResourceRef LeasesResource();

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::int64_t limit = 0;  // 0: no limit
  std::string continue_token;
  std::string resource_version;        // "" unset; "0" any cached state
  std::string resource_version_match;  // "NotOlderThan" or "Exact"
  // Watch only.
  bool allow_watch_bookmarks = false;
  bool send_initial_events = false;
  std::int64_t timeout_seconds = 0;  // 0: the server's default

  // The query string ("?labelSelector=a%3Db&limit=500"; "" when nothing is set), values
  // percent-encoded; `watch` adds watch=true and the watch-only options.
  std::string Query(bool watch) const;
};

enum class PatchType { kJsonPatch, kMergePatch, kStrategicMergePatch, kApplyPatch };

struct DeleteOptions {
  std::string propagation_policy;  // "Foreground", "Background", "Orphan" or "" (the default)
  std::optional<std::int64_t> grace_period_seconds;
  std::string precondition_uid;
  std::string precondition_resource_version;
};

struct RestClientOptions {
  double qps = 20;  // --kube-api-qps
  int burst = 30;   // --kube-api-burst
  // Retries after the first attempt for a retryable failure; then its error is returned.
  int max_retries = 5;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10'000};
  // Deadline of one attempt of a request; a LIST of a large cluster is big, so it gets longer.
  std::chrono::milliseconds request_timeout{30'000};
  std::chrono::milliseconds list_timeout{120'000};
  std::string field_manager;  // sent as ?fieldManager= on writes when set
  // The longest watch event line buffered while its newline is awaited. A stream that sends more
  // without one (a broken server or proxy) fails that watch rather than growing memory without
  // bound. Kubernetes objects are at most a few MiB (etcd's request limit is 1.5 MiB).
  std::size_t max_watch_line_bytes = std::size_t{16} << 20;
  Clock* clock = nullptr;  // null: SystemClock (waits for the rate limit and backoff)
};

// What GET /version says (apimachinery's version.Info, the fields a client reads).
struct ServerVersion {
  std::string git_version;  // "v1.34.2"
  int major = 0;            // 1
  // 34; "34+" (as some distributions report it) reads as 34. 0 when it does not read.
  int minor = 0;
};

// Requests answered (attempts, as client-go counts them) per method and code: the HTTP status as
// decimal text, or "<error>" when no answer came (client-go's rest_client_requests_total).
struct RequestCount {
  std::string method;
  std::string code;
  std::int64_t count = 0;
};

class RestClient final {
 public:
  // kInvalid for a bad qps or burst.
  static Result<std::unique_ptr<RestClient>> Create(std::shared_ptr<Transport> transport,
                                                    RestClientOptions options);
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // Each returns the object's (or the list's) JSON as the server sent it. A non-2xx answer is its
  // Status (kNotFound, kConflict, kInvalid, kExpired, ...) with the server's message; transport
  // failures as Transport::Do.
  Result<std::string> Get(const ResourceRef& resource, std::string_view namespace_,
                          std::string_view name);
  Result<std::string> List(const ResourceRef& resource, std::string_view namespace_,
                           const ListOptions& options);
  Result<std::string> Create(const ResourceRef& resource, std::string_view namespace_,
                             std::string body);
  // PUT of the object, or of its subresource ("status").
  Result<std::string> Update(const ResourceRef& resource, std::string_view namespace_,
                             std::string_view name, std::string body,
                             std::string_view subresource = {});
  Result<std::string> Patch(const ResourceRef& resource, std::string_view namespace_,
                            std::string_view name, PatchType type, std::string body,
                            std::string_view subresource = {});
  // Returns the server's answer (the deleted object, or a Status for an immediate deletion).
  Result<std::string> Delete(const ResourceRef& resource, std::string_view namespace_,
                             std::string_view name, const DeleteOptions& options);

  // Opens a watch and calls `on_event` with each event line (without its newline) until the
  // server ends the stream (its timeout: OK), `on_event` returns false (OK), or `canceller` is
  // cancelled (kCancelled). Opening it is retried like a GET; a non-2xx answer is its Status
  // (410: kExpired, relist). Lines are not decoded here. With options.timeout_seconds set, a
  // stream still open a grace period (a quarter of it, 1 to 30 s) after the server should have
  // ended it is cut with kTimeout, so a stalled connection cannot hold a watcher forever. A line
  // longer than options.max_watch_line_bytes ends the watch with kUnavailable naming the resource.
  Status Watch(const ResourceRef& resource, std::string_view namespace_, const ListOptions& options,
               const std::function<bool(std::string_view line)>& on_event,
               StreamCanceller* canceller);

  // GET /version (public to every client, authenticated or not, in kube-apiserver's default
  // RBAC). kBadRequest when the answer does not read.
  Result<ServerVersion> GetServerVersion();

  // Every request attempt so far, by method and code, sorted.
  std::vector<RequestCount> RequestCounts() const;

  Transport& transport() { return *transport_; }

 private:
  RestClient(std::shared_ptr<Transport> transport, RestClientOptions options,
             std::unique_ptr<TokenBucket> throttle);
  Result<std::string> Send(const Request& request);
  // How long to wait before retry `attempt` (0-based) of a failure, or nullopt: do not retry.
  std::optional<Clock::Duration> RetryDelay(const Request& request, const Result<Response>& result,
                                            int attempt);
  std::string WriteQuery() const;
  // Counts one attempt's outcome in requests_.
  void CountRequest(std::string_view method, const Result<Response>& result);

  std::shared_ptr<Transport> transport_;
  RestClientOptions options_;
  Clock& clock_;
  std::unique_ptr<TokenBucket> throttle_;
  mutable Mutex requests_mu_;
  std::map<std::pair<std::string, std::string>, std::int64_t> requests_ SW_GUARDED_BY(requests_mu_);
};

}  // namespace slicewright::client
