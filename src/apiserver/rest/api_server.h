// ApiServer gives Kubernetes REST semantics to a Storage: discovery, the verbs (get, list, watch,
// create, update, patch, delete, deletecollection) on built-in and custom resources, the status
// subresource, metadata rules (uid, resourceVersion, generation, optimistic concurrency,
// finalizers, graceful pod deletion), namespace lifecycle and ownerReference garbage collection.
// Handle() is thread-safe and is the HttpServer's handler. Background work (garbage collection,
// namespace finalization, pod grace-period expiry) runs on one internal thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

#include "apiserver/api/resources.h"
#include "apiserver/http/server.h"
#include "apiserver/storage/storage.h"

namespace slicewright::apiserver {

struct ApiServerOptions {
  // Wall clock for creationTimestamp and deletionTimestamp; the system clock when unset.
  std::function<std::chrono::system_clock::time_point()> now;
  // Seeds uid and generateName randomness; 0 draws a seed from std::random_device.
  std::uint64_t seed = 0;
  // How often watches that allow bookmarks get one.
  std::chrono::seconds bookmark_interval{60};
  // Service cluster IP ranges, as kube-apiserver's --service-cluster-ip-range: one CIDR
  // (single-stack) or one per family (dual-stack), the first one's family the cluster's primary
  // (what a Service without ipFamilies gets).
  std::vector<std::string> service_cidrs = {"10.96.0.0/12", "fd00:10:96::/112"};
  // kube-apiserver's --service-node-port-range.
  int node_port_min = 30000;
  int node_port_max = 32767;
};

class ApiServer final {
 public:
  // Loads the custom resources of stored CRDs, creates the default namespaces (default,
  // kube-system, kube-public, kube-node-lease) when missing, and starts the background thread.
  static Result<std::unique_ptr<ApiServer>> Create(ApiServerOptions options,
                                                   std::unique_ptr<Storage> storage);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Answers one HTTP request. Never throws.
  HttpResponse Handle(HttpRequest& request);

  // Installs CustomResourceDefinitions (JSON documents), as an addon manager would before any
  // client is served: a missing CRD is created; an existing one whose spec differs, or that lacks
  // or changed one of these labels or annotations, is updated to them (its other labels,
  // annotations and metadata, and its stored versions, kept); an equal one is left alone. The CRDs
  // go through the same validation as a client's, so the first refused one stops the installation
  // with kube's message ("CustomResourceDefinition ... is invalid: ...").
  Status EnsureCrds(const std::vector<std::string>& crds);

  // Stops the background thread and the watch timer. Open watch streams are ended by the HTTP
  // server's Stop().
  void Stop();

  Storage& storage();
  const ResourceRegistry& registry() const;
  // Number of open watch streams.
  std::size_t active_watches() const;

  struct Impl;

 private:
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::apiserver
